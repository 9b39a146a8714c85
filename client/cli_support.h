// client/cli_support.h: what the `leasehold` client subcommands share
// (tools/cmd_lock.cc, cmd_status.cc, ...): exit codes, durations, the
// --endpoints/--json/--timeout options, one-line errors, a tiny JSON writer.
//
// Not part of the installed client API.
// Thread-safety: free functions are pure; CommonOptions is one command's state.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leasehold/client.h"
#include "leasehold/status.h"

namespace CLI {
class App;
}

namespace leasehold::cli {

// Process exit codes of the client subcommands (docs/client.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;         // the server refused (not found, not holder, ...)
inline constexpr int kExitUsage = 64;         // bad flags or arguments
inline constexpr int kExitUnavailable = 69;   // no server reachable / server cannot serve
inline constexpr int kExitInternal = 70;      // a bug, or an unexpected reply
inline constexpr int kExitNotAcquired = 75;   // `lock`: not granted within --wait
inline constexpr int kExitLost = 76;          // `lock`: the lease was lost while CMD ran
inline constexpr int kExitCannotRun = 126;    // `lock`: CMD could not be started
inline constexpr int kExitNotFound = 127;     // `lock`: CMD not found

// "500ms", "10s", "2m", "1h" (a whole number and a unit). kInvalidArgument
// names the problem.
Result<client::Millis> parse_duration(std::string_view text);

struct CommonOptions {
  std::string endpoints = "127.0.0.1:7379";  // --endpoints, env LEASEHOLD_ENDPOINTS
  std::string timeout = "3s";                // --timeout: one call
  bool json = false;                         // --json (read commands)
  std::string user;                          // --user, env LEASEHOLD_USER
  std::string password_file;                 // --password-file; else env LEASEHOLD_PASSWORD
  std::string tls_ca_file;                   // --tls-ca-file: for tls:// endpoints
  std::string tls_cert_file;                 // --tls-cert-file: client certificate
  std::string tls_key_file;                  // --tls-key-file
};

// Adds --endpoints, --timeout, --user, --password-file and the --tls-*
// files (and --json when
// `with_json`). A password is never taken on the command line: it comes
// from --password-file (first line) or the LEASEHOLD_PASSWORD variable.
void add_common_options(CLI::App& cmd, CommonOptions& options, bool with_json);
Result<std::shared_ptr<client::Client>> make_client(const CommonOptions& options,
                                                    const std::string& name = "leasehold-cli");

// The exit code for an error status (see above).
int exit_code_for(const Status& status);
// Prints "leasehold <command>: <message>" on stderr; returns exit_code_for().
int report(std::string_view command, const Status& status);
// Runs `body` and stores its result with tools::set_exit_code semantics via
// `set_exit`; any escaping exception becomes one stderr line and kExitInternal.
void run_command(std::string_view command, const std::function<int()>& body,
                 const std::function<void(int)>& set_exit);

// "1.2s", "340ms", "3m05s": a human rendering of a duration.
std::string human_duration(client::Millis ms);

// JSON: a string literal with escapes.
std::string json_string(std::string_view text);
// JSON objects for the typed replies.
std::string lock_json(const client::LockInfo& lock);
std::string session_json(const client::SessionInfo& session);

}  // namespace leasehold::cli
