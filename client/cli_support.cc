#include "client/cli_support.h"

#include <cstdlib>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <iostream>

namespace leasehold::cli {

Result<client::Millis> parse_duration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status(ErrorCode::kInvalidArgument,
                  "bad duration '" + std::string(text) + "': " + std::string(why));
  };
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return bad("expected a number and a unit, like 500ms, 10s, 2m");
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc{} || value > 1'000'000'000) return bad("number out of range");
  const std::string_view unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else return bad(unit.empty() ? "add a unit: ms, s, m or h" : "unknown unit (use ms, s, m, h)");
  return client::Millis(value * scale);
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

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kOk: return kExitOk;
    case ErrorCode::kInvalidArgument: return kExitUsage;
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

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string lock_json(const client::LockInfo& lock) {
  std::string out = fmt::format(
      "{{\"name\":{},\"mode\":\"{}\",\"limit\":{},\"last_token\":{},\"delay_ms\":{},"
      "\"holders\":[",
      json_string(lock.name), client::lock_mode_name(lock.mode), lock.limit, lock.last_token,
      lock.delay_remaining.count());
  for (std::size_t i = 0; i < lock.holders.size(); ++i) {
    const auto& h = lock.holders[i];
    out += fmt::format("{}{{\"session\":{},\"owner\":{},\"token\":{},\"held_ms\":{}}}",
                       i ? "," : "", h.session, json_string(h.owner), h.token, h.held.count());
  }
  out += "],\"waiters\":[";
  for (std::size_t i = 0; i < lock.waiters.size(); ++i) {
    const auto& w = lock.waiters[i];
    out += fmt::format("{}{{\"session\":{},\"owner\":{},\"mode\":\"{}\",\"waited_ms\":{}}}",
                       i ? "," : "", w.session, json_string(w.owner),
                       client::lock_mode_name(w.mode), w.waited.count());
  }
  out += "]}";
  return out;
}

std::string session_json(const client::SessionInfo& s) {
  return fmt::format(
      "{{\"id\":{},\"owner\":{},\"ttl_ms\":{},\"remaining_ms\":{},\"held\":{},"
      "\"waiting\":{}}}",
      s.id, json_string(s.owner), s.ttl.count(), s.remaining.count(), s.held, s.waiting);
}

}  // namespace leasehold::cli
