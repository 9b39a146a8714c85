#include "common/duration_text.h"

#include <charconv>
#include <cstdint>
#include <string>

namespace leasehold {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::milliseconds> parse_duration_text(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status(ErrorCode::kInvalidArgument, "bad duration '" + std::string(text) + "': " + std::string(why) +
                                                   " (examples: 500ms, 1.5s, 10s, 2m, 1h)");
  };
  if (text == "0") return std::chrono::milliseconds(0);
  std::size_t pos = 0;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  const std::string_view whole = text.substr(0, pos);
  std::string_view fraction;
  if (pos < text.size() && text[pos] == '.') {
    const std::size_t from = ++pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    fraction = text.substr(from, pos - from);
    if (fraction.empty()) return bad("expected digits after the '.'");
  }
  if (whole.empty()) {
    if (!text.empty() && text[0] == '-') return bad("negative durations are not allowed");
    return bad("expected a number and a unit");
  }
  // At most 10 digits: 9,999,999,999 h in milliseconds still fits an int64.
  if (whole.size() > 10 || fraction.size() > 6) return bad("number out of range");
  std::int64_t value = 0;
  std::from_chars(whole.data(), whole.data() + whole.size(), value);
  const std::string_view unit = text.substr(pos);
  std::int64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else return bad(unit.empty() ? "add a unit: ms, s, m or h" : "unknown unit '" + std::string(unit) + "' (use ms, s, m, h)");
  std::int64_t frac_value = 0;
  std::int64_t frac_scale = 1;
  for (char c : fraction) {
    frac_value = frac_value * 10 + (c - '0');
    frac_scale *= 10;
  }
  if ((frac_value * scale) % frac_scale != 0) return bad("not a whole number of milliseconds");
  const std::int64_t ms = value * scale + frac_value * scale / frac_scale;
  if (ms > kMaxDurationMs) return bad("over the longest duration, " + std::to_string(kMaxDurationMs) + "ms (about 292 years)");
  return std::chrono::milliseconds(ms);
}

}  // namespace leasehold
