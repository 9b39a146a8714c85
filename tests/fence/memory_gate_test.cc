#include <gtest/gtest.h>

#include "leasehold/fence.h"

namespace leasehold::fence {
namespace {

TEST(InMemoryFenceGate, FullGateRejectsNewKeysClearlyButServesKnownOnes) {
  InMemoryFenceGate gate(2);
  ASSERT_TRUE(gate.admit("a", 1)->admitted);
  ASSERT_TRUE(gate.admit("b", 1)->admitted);
  Result<Admission> full = gate.admit("c", 1);
  ASSERT_FALSE(full.is_ok());
  EXPECT_EQ(full.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(full.status().message().find("'c'"), std::string::npos) << full.status().message();
  EXPECT_EQ(gate.size(), 2u);
  EXPECT_TRUE(gate.admit("a", 2)->admitted);
  EXPECT_FALSE(gate.admit("b", 0)->admitted);
  EXPECT_EQ(*gate.highest("c"), std::nullopt);
}

}  // namespace
}  // namespace leasehold::fence
