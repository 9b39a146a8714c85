// LEASEHOLD_ASSERT (common/assert.h): always on, in every build type; a broken
// invariant stops the process with one line naming the place, the condition
// and the detail.
#include <gtest/gtest.h>

#include "common/assert.h"

namespace leasehold {
namespace {

int checked_half(int even) {
  LEASEHOLD_ASSERT(even % 2 == 0, "odd value {} for token {}", even, 42);
  return even / 2;
}

TEST(AssertDeathTest, AHoldingInvariantCostsNothingVisible) { EXPECT_EQ(checked_half(8), 4); }

TEST(AssertDeathTest, ABrokenInvariantAbortsWithOneClearLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(checked_half(7),
               "leasehold: invariant broken at .*assert_test.cc:[0-9]+: even % 2 == 0 "
               "\\(odd value 7 for token 42\\); stopping");
}

#ifdef NDEBUG
// Release builds compile it in too (unlike assert()).
TEST(AssertDeathTest, StaysOnWithNdebug) { EXPECT_DEATH(checked_half(1), "invariant broken"); }
#endif

}  // namespace
}  // namespace leasehold
