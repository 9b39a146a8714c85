// The history checker must catch violations, or the race tests prove nothing.
#include <gtest/gtest.h>

#include "tests/fence/history_check.h"

namespace leasehold::fence::testing {
namespace {

TEST(FenceHistoryCheck, AcceptsALegalHistory) {
  std::vector<Op> ops = {{0, 10, 5, true, 5}, {20, 30, 7, true, 7}, {25, 40, 6, false, 7},
                         {50, 60, 7, true, 7}};
  EXPECT_EQ(check_fence_history(ops), "");
}

TEST(FenceHistoryCheck, CatchesALowerTokenAdmittedAfterAHigherOne) {
  std::vector<Op> ops = {{0, 10, 7, true, 7}, {20, 30, 5, true, 5}};
  EXPECT_NE(check_fence_history(ops), "");
}

TEST(FenceHistoryCheck, AllowsAnyOrderBetweenOverlappingOps) {
  std::vector<Op> ops = {{0, 30, 7, true, 7}, {10, 20, 5, true, 5}};
  EXPECT_EQ(check_fence_history(ops), "");
}

TEST(FenceHistoryCheck, CatchesInconsistentReplies) {
  EXPECT_NE(check_fence_history({{0, 1, 5, true, 6}, {2, 3, 6, true, 6}}), "");
  EXPECT_NE(check_fence_history({{0, 1, 5, false, 5}}), "");
  EXPECT_NE(check_fence_history({{0, 1, 5, false, 9}}), "") << "9 was never admitted";
}

}  // namespace
}  // namespace leasehold::fence::testing
