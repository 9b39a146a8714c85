// node/log_clock.cc: the log clock (node/log_clock.h).
#include "node/log_clock.h"

#include <algorithm>
#include <cstdint>

#include "common/saturating_duration.h"

namespace leasehold::node {

LogClock::LogClock(Clock& clock, core::LogMillis start)
    : clock_(clock), base_steady_(clock.now()), base_log_(start), last_stamp_(start) {}

core::LogMillis LogClock::now() const {
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now() - base_steady_);
  const core::LogMillis advanced = base_log_ + static_cast<core::LogMillis>(std::max<std::int64_t>(0, elapsed.count()));
  return std::max(advanced, last_stamp_);
}

core::LogMillis LogClock::stamp() {
  last_stamp_ = now();
  return last_stamp_;
}

TimePoint LogClock::steady_of(core::LogMillis at) const {
  if (at <= base_log_) return base_steady_;
  // Saturates: a configured --max-wait-ms may allow a deadline that no
  // steady_clock time_point can hold.
  return saturating_add(base_steady_, saturating_ms(at - base_log_));
}

void LogClock::rebase(core::LogMillis floor) {
  base_steady_ = clock_.now();
  base_log_ = std::max(floor, last_stamp_);
  last_stamp_ = base_log_;
}

}  // namespace leasehold::node
