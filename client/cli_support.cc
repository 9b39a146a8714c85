#include "client/cli_support.h"

#include <cstdlib>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <iostream>

#include "common/duration_text.h"

namespace leasehold::cli {

namespace {
// The --timeout text of this process's command, for report() (see header).
std::string g_timeout_text;  // NOLINT: one command per process

bool is_digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

Result<client::Millis> parse_duration(std::string_view text) { return parse_duration_text(text); }

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  const std::string want = fmt::format("(a whole number from {} to {})", min, max);
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        if (text.empty()) return "empty value " + want;
        if (text[0] == '-') return "'" + text + "' is negative " + want;
        if (!std::all_of(text.begin(), text.end(), is_digit)) return "'" + text + "' is not a number " + want;
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc{} || v < min || v > max) return "'" + text + "' is out of range " + want;
        return "";
      },
      fmt::format("UINT:{}..{}", min, max));
}

void add_common_options(CLI::App& cmd, CommonOptions& options, bool with_json) {
  cmd.add_option("--endpoints,-e", options.endpoints,
                 "Comma-separated host:port (or tls://host:port) list of servers")
      ->envname("LEASEHOLD_ENDPOINTS")
      ->capture_default_str();
  cmd.add_option("--timeout", options.timeout, "Timeout of one call (500ms, 5s, ...)")
      ->capture_default_str();
  cmd.add_option("--user", options.user, "Authenticate as this user (default: the default user)")
      ->envname("LEASEHOLD_USER");
  cmd.add_option("--password-file", options.password_file,
                 "Read the password from this file (else env LEASEHOLD_PASSWORD)");
  cmd.add_option("--tls-ca-file", options.tls_ca_file, "CA of the server certificate (tls:// endpoints)")
      ->envname("LEASEHOLD_TLS_CA_FILE");
  cmd.add_option("--tls-cert-file", options.tls_cert_file, "Client certificate (PEM) for TLS")
      ->envname("LEASEHOLD_TLS_CERT_FILE");
  cmd.add_option("--tls-key-file", options.tls_key_file, "Client private key (PEM) for TLS")
      ->envname("LEASEHOLD_TLS_KEY_FILE");
  if (with_json) cmd.add_flag("--json", options.json, "Print JSON instead of text");
}

namespace {
// The password from --password-file (its first line) or LEASEHOLD_PASSWORD.
Result<std::string> read_password(const CommonOptions& options) {
  if (options.password_file.empty()) {
    const char* env = std::getenv("LEASEHOLD_PASSWORD");
    return std::string(env != nullptr ? env : "");
  }
  std::ifstream in(options.password_file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return Status(ErrorCode::kInvalidArgument, "cannot read a password from " + options.password_file);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) return Status(ErrorCode::kInvalidArgument, options.password_file + " holds an empty password");
  return line;
}
}  // namespace

Result<std::shared_ptr<client::Client>> make_client(const CommonOptions& options,
                                                    const std::string& name) {
  auto endpoints = client::parse_endpoints(options.endpoints);
  if (!endpoints) return endpoints.status();
  auto timeout = parse_duration(options.timeout);
  if (!timeout) return timeout.status();
  if (timeout->count() <= 0) return Status(ErrorCode::kInvalidArgument, "--timeout must be > 0");
  g_timeout_text = options.timeout;
  client::ClientOptions co;
  co.endpoints = std::move(*endpoints);
  co.call_timeout = *timeout;
  co.connect_timeout = std::min(*timeout, client::Millis(1000));
  co.name = name;
  auto password = read_password(options);
  if (!password) return password.status();
  co.user = options.user;
  co.tls_ca_file = options.tls_ca_file;
  co.tls_cert_file = options.tls_cert_file;
  co.tls_key_file = options.tls_key_file;
  co.password = std::move(password).value();
  if (!co.user.empty() && co.password.empty()) {
    return Status(ErrorCode::kInvalidArgument, "--user needs a password (--password-file or LEASEHOLD_PASSWORD)");
  }
  return client::Client::create(std::move(co));
}

namespace {
bool starts_with_word(const std::string& text, std::string_view word) {
  return text.rfind(word, 0) == 0 && (text.size() == word.size() || text[word.size()] == ' ');
}
}  // namespace

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kInvalidArgument:
      // A user the server knows, refused this command or name: a refusal
      // like "not the holder", not a usage error (client/connection.cc keeps
      // the NOPERM prefix in the message).
      return starts_with_word(status.message(), "NOPERM") ? kExitFailed : kExitUsage;
    case ErrorCode::kUnreachable:
    case ErrorCode::kUnavailable:
    case ErrorCode::kTimedOut:
    case ErrorCode::kRedirect: return kExitUnavailable;
    case ErrorCode::kInternal:
    case ErrorCode::kCorruption: return kExitInternal;
    default: return kExitFailed;
  }
}

int report(std::string_view command, const Status& status) {
  std::string message = status.message().empty() ? std::string(error_code_name(status.code()))
                                                 : status.message();
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (status.code() == ErrorCode::kInvalidArgument && starts_with_word(message, "NOAUTH")) {
    // The server's own words ("HELLO must be called with the client already
    // authenticated ...") do not say which flags give the credentials.
    message = "the server requires authentication: pass --password-file or set LEASEHOLD_PASSWORD "
              "(and --user, or LEASEHOLD_USER, for a user other than 'default') (NOAUTH)";
  }
  const bool no_answer = status.code() == ErrorCode::kUnreachable || status.code() == ErrorCode::kTimedOut;
  const bool ran_out = message.find("timed out") != std::string::npos ||
                       message.find("before the deadline") != std::string::npos;  // client/connection.cc
  if (no_answer && !g_timeout_text.empty() && ran_out) {
    // Not "no server reachable": something answered the connect, or might
    // have with more time. Keep only the detail of client_core's wrapper.
    constexpr std::string_view kWrapper = "no leasehold server reachable (";
    if (message.rfind(kWrapper, 0) == 0 && message.back() == ')') {
      message = message.substr(kWrapper.size(), message.size() - kWrapper.size() - 1);
    }
    message = "request timed out after " + g_timeout_text + " (--timeout; the server may be busy or paused): " +
              message;
  }
  std::cerr << "leasehold " << command << ": " << message << "\n";
  return exit_code_for(status);
}

void run_command(std::string_view command, const std::function<int()>& body,
                 const std::function<void(int)>& set_exit) {
  try {
    set_exit(body());
  } catch (const std::exception& e) {
    set_exit(report(command, Status(ErrorCode::kInternal, e.what())));
  } catch (...) {
    set_exit(report(command, Status(ErrorCode::kInternal, "unknown exception")));
  }
}

std::string human_duration(client::Millis ms) {
  const auto v = ms.count();
  if (v < 1000) return fmt::format("{}ms", v);
  if (v < 60'000) return fmt::format("{:.1f}s", static_cast<double>(v) / 1000.0);
  if (v < 3'600'000) return fmt::format("{}m{:02}s", v / 60'000, (v / 1000) % 60);
  return fmt::format("{}h{:02}m", v / 3'600'000, (v / 60'000) % 60);
}

}  // namespace leasehold::cli
