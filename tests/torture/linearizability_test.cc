// tests/torture/linearizability_test.cc: the Wing–Gong/Lowe search of
// torture/checker/linearizability.h on hand-made histories of one key.
#include <gtest/gtest.h>

#include "tests/torture/history_builder.h"
#include "torture/checker/linearizability.h"

namespace leasehold::torture {
namespace {

using testing::cset;
using testing::make;
using testing::with_value;

Op put(int p, std::int64_t inv, std::int64_t cmp, std::uint64_t token, std::string value, Outcome out = Outcome::kOk) {
  return with_value(make("fput", p, "f0", inv, cmp, out, token), std::move(value));
}
Op get(int p, std::int64_t inv, std::int64_t cmp, std::uint64_t token, std::string value) {
  return with_value(make("fget", p, "f0", inv, cmp, Outcome::kOk, token), std::move(value));
}
Op del(int p, std::int64_t inv, std::int64_t cmp, std::string value, Outcome out) {
  return with_value(make("cdel", p, "c0", inv, cmp, out), std::move(value));
}

TEST(TortureLinearizability, FencedStoreReadsTheLastWrite) {
  CheckOptions o;
  EXPECT_EQ(check_key_linearizable({put(1, 0, 10, 5, "a"), get(2, 20, 30, 5, "a")}, o), Linearizable::kYes);
  // A read overlapping a write may see either value.
  EXPECT_EQ(check_key_linearizable({put(1, 0, 10, 5, "a"), put(2, 20, 40, 6, "b"), get(3, 25, 30, 5, "a")}, o),
            Linearizable::kYes);
  EXPECT_EQ(check_key_linearizable({put(1, 0, 10, 5, "a"), put(2, 20, 40, 6, "b"), get(3, 25, 30, 6, "b")}, o),
            Linearizable::kYes);
  // A stale read after the write completed: not linearizable.
  EXPECT_EQ(check_key_linearizable({put(1, 0, 10, 5, "a"), put(2, 20, 30, 6, "b"), get(3, 40, 50, 5, "a")}, o),
            Linearizable::kNo);
  // A put acknowledged with a lower token than the stored one.
  EXPECT_EQ(check_key_linearizable({put(1, 0, 10, 6, "a"), put(2, 20, 30, 5, "b")}, o), Linearizable::kNo);
  // A read of a value nobody wrote.
  EXPECT_EQ(check_key_linearizable({get(3, 40, 50, 9, "z")}, o), Linearizable::kNo);
}

TEST(TortureLinearizability, AnUnknownWriteMayOrMayNotHaveHappened) {
  CheckOptions o;
  Op lost = put(1, 0, 10, 5, "a", Outcome::kUnknown);
  EXPECT_EQ(check_key_linearizable({lost, get(2, 20, 30, 0, "")}, o), Linearizable::kYes);
  EXPECT_EQ(check_key_linearizable({lost, get(2, 20, 30, 5, "a")}, o), Linearizable::kYes);
  // ... but once seen it cannot disappear again.
  EXPECT_EQ(check_key_linearizable({lost, get(2, 20, 30, 5, "a"), get(2, 40, 50, 0, "")}, o), Linearizable::kNo);
}

TEST(TortureLinearizability, CompatKeysWithExpiry) {
  CheckOptions o;
  // SET NX, DELIFEQ, SET NX again.
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000), del(1, 10, 15, "a", Outcome::kOk),
                                    cset(2, "c0", "b", 20, 25, Outcome::kOk, 1000)},
                                   o),
            Linearizable::kYes);
  // Two SET NX succeed within the first's PX, without a delete.
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000),
                                    cset(2, "c0", "b", 500, 505, Outcome::kOk, 1000)},
                                   o),
            Linearizable::kNo);
  // After the PX ran out the key may have expired.
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000),
                                    cset(2, "c0", "b", 1500, 1505, Outcome::kOk, 1000)},
                                   o),
            Linearizable::kYes);
  // SET NX refused while nobody holds the key.
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kFail, 1000)}, o), Linearizable::kNo);
  // DELIFEQ of the wrong value deletes nothing.
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000), del(2, 10, 15, "b", Outcome::kOk)}, o),
            Linearizable::kNo);
  EXPECT_EQ(check_key_linearizable({cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000), del(2, 10, 15, "b", Outcome::kFail)}, o),
            Linearizable::kYes);
}

// A lease run (torture/checker/checker.h): its history says so first.
std::vector<Op> as_lease_run(std::vector<Op> ops) {
  Op record = with_value(make("durability", -1, "lease", 0, 0), "lease");
  record.limit = 1000;  // the workers' TTL, ms
  ops.insert(ops.begin(), record);
  return ops;
}

TEST(TortureLinearizability, ALeaseRunsCrashEmptiesCompatKeysAndItsQuarantineRefuses) {
  const Op crash = make("crash", -1, "kill", 100, 200);
  // A key set with PX 10 s before the crash is gone after it (the restart
  // expired its session): its holder's DELIFEQ finds nothing.
  const std::vector<Op> emptied = {cset(1, "c0", "a", 0, 5, Outcome::kOk, 10'000), crash,
                                   del(1, 300, 305, "a", Outcome::kFail)};
  EXPECT_TRUE(check_linearizable(as_lease_run(emptied)).empty());
  EXPECT_EQ(check_linearizable(emptied).size(), 1u);  // in fsync mode the key survives the crash
  // A SET NX of a free key refused during the quarantine (the longest TTL
  // in use, 1 s, plus the drift bound after the restart): no evidence.
  const std::vector<Op> refused = {cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000), del(1, 10, 15, "a", Outcome::kOk),
                                   crash, cset(2, "c0", "b", 300, 305, Outcome::kFail, 1000)};
  EXPECT_TRUE(check_linearizable(as_lease_run(refused)).empty());
  EXPECT_EQ(check_linearizable(refused).size(), 1u);
  // Refused after the quarantine, with the key free: a violation in a lease
  // run too.
  const std::vector<Op> late = {cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000), del(1, 10, 15, "a", Outcome::kOk), crash,
                                cset(2, "c0", "b", 2000, 2005, Outcome::kFail, 1000)};
  EXPECT_EQ(check_linearizable(as_lease_run(late)).size(), 1u);
  // Fenced values stay durable in a lease run: a crash does not empty them.
  const std::vector<Op> fenced = {put(1, 0, 10, 5, "a"), crash, get(2, 300, 310, 0, "")};
  EXPECT_EQ(check_linearizable(as_lease_run(fenced)).size(), 1u);
}

TEST(TortureLinearizability, ManyConcurrentOpsStayWithinBudget) {
  CheckOptions o;
  std::vector<Op> ops;
  for (int i = 0; i < 200; ++i) {
    const std::int64_t t = i * 10;
    ops.push_back(put(i % 4, t, t + 25, static_cast<std::uint64_t>(i + 1), "v" + std::to_string(i)));
  }
  EXPECT_EQ(check_key_linearizable(ops, o), Linearizable::kYes);
}

}  // namespace
}  // namespace leasehold::torture
