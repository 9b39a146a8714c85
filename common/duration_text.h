// common/duration_text.h: durations as people type them, "500ms", "1.5s",
// "10s", "2m", "1h" (a whole number, an optional fraction, a unit: ms, s, m
// or h; "0" alone is zero), for the CLI's flags and the server's
// `--max-hold`.
//
// Errors: kInvalidArgument "bad duration 'TEXT': WHY (examples: ...)" for a
// missing or unknown unit, a negative value, a fraction finer than a
// millisecond, a number of more than 10 digits, or more than
// kMaxDurationMs. Callers bound the result
// further themselves.
// Thread-safety: a pure function.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold {

// The longest duration accepted: in nanoseconds it still fits a
// steady_clock duration (INT64_MAX / 10^6 ms, about 292 years).
inline constexpr std::int64_t kMaxDurationMs = 9'223'372'036'854;

Result<std::chrono::milliseconds> parse_duration_text(std::string_view text);

}  // namespace leasehold
