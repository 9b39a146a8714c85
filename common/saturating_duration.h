// common/saturating_duration.h: milliseconds from the wire (or from the log)
// as steady_clock durations and deadlines that clamp instead of overflowing.
//
// std::chrono::milliseconds(n) mixed with a steady_clock duration converts
// to nanoseconds, and n * 1,000,000 overflows int64 (undefined behaviour)
// for n over about 9.2e12 ms (about 292 years). The parsers bound every
// wire duration below that (server/commands/command_args.cc); these helpers
// keep the conversions defined whatever the value, e.g. with a configured
// limit (--max-wait-ms) above the parse bound.
//
// saturating_ms(ms): ms as a steady_clock::duration, duration::max() when
//   it does not fit.
// saturating_add(t, d): t + d, clamped to time_point::max() / min().
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace leasehold {

inline std::chrono::steady_clock::duration saturating_ms(std::uint64_t ms) {
  using Duration = std::chrono::steady_clock::duration;
  constexpr Duration::rep kTicksPerMs = std::chrono::duration_cast<Duration>(std::chrono::milliseconds(1)).count();
  static_assert(kTicksPerMs > 0, "steady_clock ticks are at most 1 ms");
  constexpr std::uint64_t kMaxMs = static_cast<std::uint64_t>(Duration::max().count() / kTicksPerMs);
  if (ms > kMaxMs) return Duration::max();
  return Duration(static_cast<Duration::rep>(ms) * kTicksPerMs);
}

inline std::chrono::steady_clock::time_point saturating_add(std::chrono::steady_clock::time_point t,
                                                            std::chrono::steady_clock::duration d) {
  using TimePoint = std::chrono::steady_clock::time_point;
  using Rep = std::chrono::steady_clock::duration::rep;
  const Rep base = t.time_since_epoch().count();
  const Rep by = d.count();
  if (by > 0 && base > std::numeric_limits<Rep>::max() - by) return TimePoint::max();
  if (by < 0 && base < std::numeric_limits<Rep>::min() - by) return TimePoint::min();
  return t + d;
}

}  // namespace leasehold
