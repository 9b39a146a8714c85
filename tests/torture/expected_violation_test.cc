// tests/torture/expected_violation_test.cc: `run --expect-violation CHECK`
// (torture/expected_violation.h): a planted bug counts as caught only by
// the check it names; no violation, or a violation of another check,
// fails the run.
#include <gtest/gtest.h>

#include "torture/expected_violation.h"

namespace leasehold::torture {
namespace {

TEST(TortureExpectedViolation, NamesOnlyKnownChecks) {
  auto one = parse_expected_checks("fencing");
  ASSERT_TRUE(one.is_ok());
  EXPECT_EQ(one.value(), std::vector<std::string>{"fencing"});
  auto two = parse_expected_checks("durability,linearizability");
  ASSERT_TRUE(two.is_ok());
  EXPECT_EQ(two->size(), 2u);
  for (const char* bad : {"", "fence", "fencing,", "mutual exclusion"}) {
    auto r = parse_expected_checks(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("mutual-exclusion"), std::string::npos) << r.status().message();
  }
}

TEST(TortureExpectedViolation, OnlyTheNamedCheckCatchesThePlantedBug) {
  const std::vector<std::string> fencing = {"fencing"};
  EXPECT_EQ(unmet_expectation(fencing, {{"fencing", 3}}), "");
  EXPECT_EQ(unmet_expectation(fencing, {}), "no violation (expected fencing)");
  EXPECT_EQ(unmet_expectation(fencing, {{"fencing", 0}}), "no violation (expected fencing)");
  EXPECT_EQ(unmet_expectation(fencing, {{"durability", 1}}), "a violation of durability, not of the expected fencing");
  // Another check firing beside the named one fails too: it found something else.
  EXPECT_EQ(unmet_expectation(fencing, {{"fencing", 2}, {"liveness", 1}}),
            "a violation of liveness, not of the expected fencing");
  const std::vector<std::string> both = {"durability", "linearizability"};
  EXPECT_EQ(unmet_expectation(both, {{"durability", 1}}), "");
  EXPECT_EQ(unmet_expectation(both, {{"durability", 1}, {"linearizability", 4}}), "");
}

}  // namespace
}  // namespace leasehold::torture
