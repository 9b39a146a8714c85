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
