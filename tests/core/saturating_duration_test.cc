// common/saturating_duration.h: millisecond counts and deadlines that clamp
// at the ends of steady_clock's range instead of overflowing.
#include "common/saturating_duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace leasehold {
namespace {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;

TEST(SaturatingDuration, MillisecondsConvertExactlyOrClamp) {
  EXPECT_EQ(saturating_ms(0), Duration::zero());
  EXPECT_EQ(saturating_ms(1), std::chrono::milliseconds(1));
  const std::uint64_t largest_exact = static_cast<std::uint64_t>(INT64_MAX / 1'000'000);  // steady_clock is ns
  EXPECT_EQ(saturating_ms(largest_exact), std::chrono::milliseconds(largest_exact));
  EXPECT_EQ(saturating_ms(largest_exact + 1), Duration::max());
  EXPECT_EQ(saturating_ms(INT64_MAX), Duration::max());
  EXPECT_EQ(saturating_ms(UINT64_MAX), Duration::max());
}

TEST(SaturatingDuration, AddClampsAtTheEndsOfTheTimeline) {
  const TimePoint t = TimePoint{} + std::chrono::hours(1);
  EXPECT_EQ(saturating_add(t, Duration::zero()), t);
  EXPECT_EQ(saturating_add(t, saturating_ms(1)), t + std::chrono::milliseconds(1));
  EXPECT_EQ(saturating_add(t, saturating_ms(INT64_MAX)), TimePoint::max());
  EXPECT_EQ(saturating_add(t, saturating_ms(UINT64_MAX)), TimePoint::max());
  EXPECT_EQ(saturating_add(TimePoint::max(), saturating_ms(1)), TimePoint::max());
  EXPECT_EQ(saturating_add(TimePoint::max() - std::chrono::milliseconds(1), saturating_ms(1)), TimePoint::max());
  EXPECT_EQ(saturating_add(t, -std::chrono::hours(1)), TimePoint{});
  EXPECT_EQ(saturating_add(TimePoint::min(), Duration(-1)), TimePoint::min());
  EXPECT_EQ(saturating_add(TimePoint{} - std::chrono::hours(1), Duration::min()), TimePoint::min());
}

}  // namespace
}  // namespace leasehold
