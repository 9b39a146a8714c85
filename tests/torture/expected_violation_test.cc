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
  const std::vector<std::string> none;
  EXPECT_EQ(unmet_expectation(fencing, none, {{"fencing", 3}}), "");
  EXPECT_EQ(unmet_expectation(fencing, none, {}), "no violation of fencing");
  EXPECT_EQ(unmet_expectation(fencing, none, {{"fencing", 0}}), "no violation of fencing");
  EXPECT_EQ(unmet_expectation(fencing, none, {{"durability", 1}}),
            "a violation of durability, not of the expected fencing");
  // Another check firing beside the named one fails too: it found something else.
  EXPECT_EQ(unmet_expectation(fencing, none, {{"fencing", 2}, {"liveness", 1}}),
            "a violation of liveness, not of the expected fencing");
}

TEST(TortureExpectedViolation, AllowedChecksNeitherFailNorCatch) {
  const std::vector<std::string> durability = {"durability"};
  const std::vector<std::string> linearizability = {"linearizability"};
  // A lost write shows in durability and, as a consequence, in linearizability.
  EXPECT_EQ(unmet_expectation(durability, linearizability, {{"durability", 5}, {"linearizability", 1}}), "");
  // The allowed check alone does not catch the planted bug.
  EXPECT_EQ(unmet_expectation(durability, linearizability, {{"linearizability", 1}}), "no violation of durability");
  EXPECT_EQ(unmet_expectation(durability, linearizability, {{"durability", 1}, {"token-order", 1}}),
            "a violation of token-order, not of the expected durability,linearizability");
  // A control run (nothing expected) passes when every violation is allowed.
  EXPECT_EQ(unmet_expectation({}, linearizability, {}), "");
  EXPECT_EQ(unmet_expectation({}, linearizability, {{"linearizability", 2}}), "");
  EXPECT_EQ(unmet_expectation({}, linearizability, {{"fencing", 1}}),
            "a violation of fencing, not of the expected linearizability");
}

}  // namespace
}  // namespace leasehold::torture
