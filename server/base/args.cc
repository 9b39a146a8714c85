#include "server/base/args.h"

#include <charconv>

#include <fmt/format.h>

namespace leasehold::server {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 32);
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 32);
    if (x != y) return false;
  }
  return true;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  }
  return out;
}

namespace {

// The whole of `text` as a decimal T in [min, max], or kInvalidArgument naming `name`.
template <typename T>
Result<T> parse_integer(std::string_view text, std::string_view name, T min, T max) {
  T v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("{} is not an integer or out of range ({} to {})", name, min, max));
  }
  return v;
}

}  // namespace

Result<std::int64_t> parse_int(std::string_view text, std::string_view name, std::int64_t min,
                               std::int64_t max) {
  return parse_integer(text, name, min, max);
}

Result<std::uint64_t> parse_uint(std::string_view text, std::string_view name, std::uint64_t min,
                                 std::uint64_t max) {
  return parse_integer(text, name, min, max);
}

std::string_view error_prefix(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ERR";
    case ErrorCode::kInvalidArgument: return "ERR";
    case ErrorCode::kLimitExceeded: return "LIMIT";
    case ErrorCode::kNotFound: return "NOTFOUND";
    case ErrorCode::kNotHolder: return "NOTHOLDER";
    case ErrorCode::kStaleToken: return "STALE";
    case ErrorCode::kSessionExpired: return "EXPIRED";
    case ErrorCode::kConflict: return "CONFLICT";
    case ErrorCode::kWouldBlock: return "CONFLICT";
    case ErrorCode::kTimedOut: return "TIMEOUT";
    case ErrorCode::kUnavailable: return "UNAVAILABLE";
    case ErrorCode::kUnreachable: return "UNAVAILABLE";
    case ErrorCode::kRedirect: return "REDIRECT";
    case ErrorCode::kCorruption: return "UNAVAILABLE";
    case ErrorCode::kIoError: return "UNAVAILABLE";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "INTERNAL";
}

std::string error_text(const Status& status) {
  std::string out(error_prefix(status.code()));
  if (!status.message().empty()) {
    out += ' ';
    out += status.message();
  }
  return out;
}

}  // namespace leasehold::server
