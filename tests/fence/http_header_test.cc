#include <gtest/gtest.h>

#include "leasehold/fence_http.h"

namespace leasehold::fence {
namespace {

TEST(FencingTokenHeader, AdmitsFreshRefusesStaleAndRejectsBadHeaders) {
  InMemoryFenceGate gate;
  EXPECT_EQ(kFencingTokenHeader, "Fencing-Token");
  EXPECT_EQ(http_status_for(admit_header(gate, "orders", "34")), 200);
  EXPECT_EQ(http_status_for(admit_header(gate, "orders", "34")), 200);
  Status stale = admit_header(gate, "orders", "33");
  EXPECT_EQ(stale.code(), ErrorCode::kStaleToken);
  EXPECT_EQ(http_status_for(stale), 409);
  Status missing = admit_header(gate, "orders", std::nullopt);
  EXPECT_EQ(http_status_for(missing), 400);
  EXPECT_NE(missing.message().find("Fencing-Token"), std::string::npos);
  EXPECT_EQ(http_status_for(admit_header(gate, "orders", "35 ")), 400);
  EXPECT_EQ(http_status_for(admit_header(gate, "orders", "-1")), 400);
  EXPECT_EQ(*gate.highest("orders"), std::optional<Token>(34)) << "bad headers change nothing";
  InMemoryFenceGate full(0);
  EXPECT_EQ(http_status_for(admit_header(full, "x", "1")), 413);
}

}  // namespace
}  // namespace leasehold::fence
