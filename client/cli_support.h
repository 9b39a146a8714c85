// client/cli_support.h: what the `leasehold` client subcommands share
// (tools/cmd_lock.cc, cmd_status.cc, ...): exit codes, durations, whole
// numbers, the --endpoints/--json/--timeout options, one-line errors. (The
// JSON output is in tools/cli_json.h.)
//
// Not part of the installed client API.
// Thread-safety: free functions are pure, except that make_client() records
// the --timeout text that report() quotes (one command per process; set
// once, before any call that could fail with a timeout).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/exit_codes.h"
#include "leasehold/client.h"
#include "leasehold/status.h"

namespace CLI {
class App;
class Validator;
}

namespace leasehold::cli {

// Process exit codes of the client subcommands: one scheme with the server
// (common/exit_codes.h, docs/client.md "Exit codes").
inline constexpr int kExitOk = exit_code::kOk;
inline constexpr int kExitFailed = exit_code::kFailed;            // the server refused (not found, not holder, ...)
inline constexpr int kExitUsage = exit_code::kUsage;              // bad flags or arguments
inline constexpr int kExitUnavailable = exit_code::kUnavailable;  // no server reachable / no answer in time
inline constexpr int kExitInternal = exit_code::kInternal;        // a bug, or an unexpected reply
inline constexpr int kExitNotAcquired = exit_code::kNotAcquired;  // `lock`: not granted within --wait
inline constexpr int kExitLost = exit_code::kLost;                // `lock`: the lease was lost while CMD ran
inline constexpr int kExitHoldEnded = exit_code::kHoldEnded;      // `lock --max-hold`: the hold ended while CMD ran
inline constexpr int kExitCannotRun = exit_code::kCannotRun;      // `lock`: CMD could not be started
inline constexpr int kExitNotFound = exit_code::kNotFound;        // `lock`: CMD not found

// "500ms", "10s", "1.5s", "2m", "1h": a number and a unit (ms, s, m, h); a
// fraction is allowed when the result is a whole number of milliseconds
// ("1.5s" yes, "0.5ms" no). "0" needs no unit. kInvalidArgument names the
// problem and shows examples.
Result<client::Millis> parse_duration(std::string_view text);

// A CLI11 check for a whole number in [min, max] whose message says what is
// wrong: "'abc' is not a number", "'-5' is negative", "'0' is out of range",
// each followed by "(a whole number from MIN to MAX)".
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);

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

// The exit code for an error status (see above). Refused credentials
// (WRONGPASS, NOAUTH, an untrusted certificate, a plain endpoint on a TLS
// port) are usage errors (64); a NOPERM refusal is a refusal (1).
int exit_code_for(const Status& status);
// Prints "leasehold <command>: <message>" on stderr; returns exit_code_for().
// A call that ran out of time says so with the --timeout given to
// make_client(): "request timed out after 1ms (--timeout): ...", not
// "no server reachable". A NOAUTH refusal (no credentials given) names the
// flags that give them: "the server requires authentication: pass
// --password-file or set LEASEHOLD_PASSWORD ...".
int report(std::string_view command, const Status& status);
// Runs `body` and stores its result with tools::set_exit_code semantics via
// `set_exit`; any escaping exception becomes one stderr line and kExitInternal.
void run_command(std::string_view command, const std::function<int()>& body,
                 const std::function<void(int)>& set_exit);

// "1.2s", "340ms", "3m05s": a human rendering of a duration.
std::string human_duration(client::Millis ms);

}  // namespace leasehold::cli
