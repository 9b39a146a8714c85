#include <gtest/gtest.h>

#include "leasehold/fence.h"

namespace leasehold::fence {
namespace {

TEST(ParseToken, AcceptsDecimalUpToMax) {
  EXPECT_EQ(*parse_token("0"), 0u);
  EXPECT_EQ(*parse_token("42"), 42u);
  EXPECT_EQ(*parse_token("18446744073709551615"), UINT64_MAX);
}

TEST(ParseToken, RejectsEverythingElse) {
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x10", "1.5", "abc",
                          "18446744073709551616", "999999999999999999999"}) {
    Result<Token> r = parse_token(bad);
    ASSERT_FALSE(r.is_ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(Admission, StaleStatusNamesKeyTokenAndHighest) {
  Status s = Admission{false, 34}.to_status("jobs/42", 33);
  EXPECT_EQ(s.code(), ErrorCode::kStaleToken);
  EXPECT_EQ(s.message(), "stale token 33 for 'jobs/42': highest admitted is 34");
  EXPECT_TRUE((Admission{true, 34}.to_status("jobs/42", 34).is_ok()));
}

TEST(ValidateKey, BoundsLength) {
  EXPECT_EQ(validate_key("").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(validate_key(std::string(kMaxKeyBytes, 'k')).is_ok());
  EXPECT_EQ(validate_key(std::string(kMaxKeyBytes + 1, 'k')).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace leasehold::fence
