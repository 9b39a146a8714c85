// tests/torture/checker_test.cc: each check of torture/checker/checker.h
// passes a good hand-made history and fires on a bad one.
#include <gtest/gtest.h>

#include "tests/torture/history_builder.h"
#include "torture/checker/checker.h"

namespace leasehold::torture {
namespace {

using testing::acquire;
using testing::hold;
using testing::make;
using testing::with_value;

TEST(TortureFencing, RegisterAcceptsRisingTokensAndRefusesStaleOnes) {
  std::vector<Op> good = {make("reg", 1, "x0", 10, 11, Outcome::kOk, 5), make("reg", 2, "x0", 20, 21, Outcome::kOk, 7),
                          make("reg", 1, "x0", 30, 31, Outcome::kFail, 5)};  // a zombie, refused: fine
  EXPECT_TRUE(check_fencing(good).empty());
  std::vector<Op> bad = {make("reg", 1, "x0", 10, 11, Outcome::kOk, 7), make("reg", 2, "x0", 20, 21, Outcome::kOk, 5)};
  auto v = check_fencing(bad);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].check, "fencing");
}

TEST(TortureFencing, RefusalOfALiveHolderIsAViolation) {
  Op refused = make("reg", 1, "x0", 30, 31, Outcome::kFail, 5);
  refused.cmp2 = 100 * 1'000'000;  // its safe deadline was still ahead
  EXPECT_EQ(check_fencing({make("reg", 2, "x0", 20, 21, Outcome::kOk, 7), refused}).size(), 1u);
  refused.cmp2 = 25 * 1'000'000;  // already past: the refusal is fencing at work
  EXPECT_TRUE(check_fencing({make("reg", 2, "x0", 20, 21, Outcome::kOk, 7), refused}).empty());
}

TEST(TortureFencing, FencePutNeverAcknowledgesALowerTokenAfterAHigherOne) {
  std::vector<Op> good = {make("fput", 1, "f0", 10, 12, Outcome::kOk, 5), make("fput", 2, "f0", 20, 22, Outcome::kOk, 9),
                          make("fput", 1, "f0", 30, 32, Outcome::kFail, 5)};
  EXPECT_TRUE(check_fencing(good).empty());
  // Concurrent puts may land in either order.
  EXPECT_TRUE(check_fencing({make("fput", 1, "f0", 10, 30, Outcome::kOk, 9),
                             make("fput", 2, "f0", 11, 29, Outcome::kOk, 5)}).empty());
  auto v = check_fencing({make("fput", 1, "f0", 10, 12, Outcome::kOk, 9), make("fput", 2, "f0", 20, 22, Outcome::kOk, 5)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("token 5"), std::string::npos);
}

TEST(TortureTokenOrder, UniqueAndRisingInRealTime) {
  std::vector<Op> good = {acquire(1, "x0", 0, 10, 3), acquire(2, "x1", 5, 8, 4), acquire(3, "x0", 20, 30, 9),
                          acquire(4, "rw0", 40, 50, 12, "shared"), acquire(5, "rw0", 41, 50, 12, "shared")};
  EXPECT_TRUE(check_token_order(good).empty());
  // Token 9 acknowledged at 10, then an acquire sent at 20 gets 7.
  auto v = check_token_order({acquire(1, "x0", 0, 10, 9), acquire(2, "x1", 20, 30, 7)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].check, "token-order");
  // Reused token on two exclusive grants (e.g. after a restart).
  EXPECT_FALSE(check_token_order({acquire(1, "x0", 0, 10, 9), acquire(2, "x0", 0, 30, 9)}).empty());
}

TEST(TortureTokenOrder, OneCommandMayGrantSeveralLocksOneToken) {
  // The end of a quarantine or a lock-delay grants the waiters of several
  // locks (and two permits of one semaphore) with its own token: every
  // acquire was pending when the command was applied.
  std::vector<Op> one = {acquire(1, "x0", 0, 100, 40), acquire(2, "x1", 10, 101, 40),
                         acquire(3, "sem0", 20, 100, 40, "semaphore"), acquire(4, "sem0", 30, 102, 40, "semaphore")};
  EXPECT_TRUE(check_token_order(one).empty());
  // Not pending at one instant: an acquire sent after another with the same
  // token was answered.
  EXPECT_EQ(check_token_order({acquire(1, "x0", 0, 10, 40), acquire(2, "x1", 20, 30, 40)}).size(), 2u);
  // Answered on both sides of a crash: the restart handed the token out again.
  Op crash = make("crash", -1, "kill", 50, 60);
  auto v = check_token_order({acquire(1, "x0", 0, 40, 40), crash, acquire(2, "x1", 10, 70, 40)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("granted 2 times"), std::string::npos);
  // Answered together inside a crash's window (a disk fault, before the
  // restart): one process, one command.
  EXPECT_TRUE(check_token_order({crash, acquire(1, "x0", 0, 55, 40), acquire(2, "x1", 10, 56, 40)}).empty());
  EXPECT_EQ(check_token_order({acquire(1, "x0", 0, 45, 40), crash, acquire(2, "x1", 10, 55, 40)}).size(), 1u);
  // A writer beside readers of one lock, or a SET NX: never one command's.
  EXPECT_FALSE(check_token_order({acquire(1, "rw0", 0, 100, 40, "shared"), acquire(2, "rw0", 10, 100, 40)}).empty());
  Op set = testing::cset(2, "c0", "b", 10, 100, Outcome::kOk, 1000, 40);
  EXPECT_FALSE(check_token_order({acquire(1, "x0", 0, 100, 40), set}).empty());
}

TEST(TortureMutualExclusion, ExclusiveHoldsMustNotOverlapWhileLive) {
  EXPECT_TRUE(check_mutual_exclusion({hold(1, "x0", 0, 10, 1), hold(2, "x0", 10, 20, 2)}).empty());
  auto v = check_mutual_exclusion({hold(1, "x0", 0, 15, 1), hold(2, "x0", 10, 20, 2)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].check, "mutual-exclusion");
  // Readers share; a writer may not join them.
  EXPECT_TRUE(check_mutual_exclusion({hold(1, "rw0", 0, 15, 1, "shared"), hold(2, "rw0", 10, 20, 1, "shared")}).empty());
  EXPECT_EQ(check_mutual_exclusion({hold(1, "rw0", 0, 15, 1, "shared"), hold(2, "rw0", 10, 20, 2)}).size(), 1u);
}

TEST(TortureMutualExclusion, SemaphoreAtMostItsLimit) {
  std::vector<Op> two = {hold(1, "sem0", 0, 30, 1, "semaphore", 2), hold(2, "sem0", 5, 30, 2, "semaphore", 2)};
  EXPECT_TRUE(check_mutual_exclusion(two).empty());
  two.push_back(hold(3, "sem0", 10, 20, 3, "semaphore", 2));
  auto v = check_mutual_exclusion(two);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].message.find("3 semaphore permits"), std::string::npos);
}

TEST(TortureMutualExclusion, CompatKeysLiveUntilDelifeqOrExpiry) {
  using testing::cset;
  // A's key (PX 1000) expires, then B's SET NX succeeds: fine.
  std::vector<Op> good = {cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000, 1), cset(2, "c0", "b", 1100, 1105, Outcome::kOk, 1000, 2)};
  EXPECT_TRUE(check_mutual_exclusion(good).empty());
  // B got it while A's PX was still running and A never released.
  std::vector<Op> bad = {cset(1, "c0", "a", 0, 5, Outcome::kOk, 1000, 1), cset(2, "c0", "b", 500, 505, Outcome::kOk, 1000, 2)};
  EXPECT_EQ(check_mutual_exclusion(bad).size(), 1u);
  // ... unless A released with DELIFEQ first.
  bad.push_back(with_value(make("cdel", 1, "c0", 400, 402, Outcome::kOk), "a"));
  EXPECT_TRUE(check_mutual_exclusion(bad).empty());
}

TEST(TortureDurability, TokensAfterACrashAreAboveEveryAcknowledgedOne) {
  Op crash = make("crash", -1, "kill", 100, 200);
  EXPECT_TRUE(check_durability({acquire(1, "x0", 0, 10, 50), crash, acquire(2, "x0", 300, 310, 51)}).empty());
  auto v = check_durability({acquire(1, "x0", 0, 10, 50), crash, acquire(2, "x0", 300, 310, 50)});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].check, "durability");
}

TEST(TortureDurability, AnAcknowledgedFencedWriteIsNeverLost) {
  Op put = with_value(make("fput", 1, "f0", 0, 10, Outcome::kOk, 7), "v");
  EXPECT_TRUE(check_durability({put, with_value(make("fget", -1, "f0", 300, 310, Outcome::kOk, 7), "v")}).empty());
  EXPECT_EQ(check_durability({put, make("fget", -1, "f0", 300, 310, Outcome::kOk, 0)}).size(), 1u);  // nil
}

TEST(TortureDurability, AWorkerRefusedAsAlreadyHoldingMeansALostRelease) {
  Op refused = acquire(1, "x0", 300, 310, 0, "exclusive", Outcome::kFail);
  EXPECT_TRUE(check_durability({refused}).empty());  // plain "not granted"
  refused.aux = "conflict: session 5 already holds lock 'x0'";
  EXPECT_EQ(check_durability({refused}).size(), 1u);
  // Another refusal that is not about this session's holds (it used to be
  // how a deposed primary answered) is not this check's business.
  refused.aux = "unavailable: deposed: not the primary: this node holds no election key";
  EXPECT_TRUE(check_durability({refused}).empty());
}

TEST(TortureDurability, AReleaseOfALiveHoldRefusedMeansALostGrant) {
  Op rel = make("release", 1, "x0", 500, 510, Outcome::kFail, 9);
  rel.aux = "not_holder: session 4 does not hold 'x0'";
  // The hold ended at the release (the session was live): a lost grant.
  EXPECT_EQ(check_durability({hold(1, "x0", 100, 500, 9), rel}).size(), 1u);
  // The hold ended at the safe deadline before the release: expected.
  EXPECT_TRUE(check_durability({hold(1, "x0", 100, 400, 9), rel}).empty());
}

TEST(TortureLiveness, AFailedPostHealAcquireIsAViolation) {
  EXPECT_TRUE(check_liveness({make("liveness", -1, "x0", 0, 10, Outcome::kOk)}).empty());
  EXPECT_EQ(check_liveness({make("liveness", -1, "x0", 0, 10000, Outcome::kFail)}).size(), 1u);
}

TEST(TortureHistory, JsonLinesRoundTrip) {
  Op op = with_value(acquire(3, "x\"0\\\n", 1, 2, 99, "semaphore"), "p3-1");
  op.limit = 2;
  op.cmp2 = 77;
  op.session = 12;
  op.aux = "timed_out: no reply";
  auto back = from_json(to_json(op));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(to_json(back.value()), to_json(op));
  EXPECT_EQ(back->key, op.key);
  EXPECT_FALSE(from_json("{\"op\":\"acquire\",\"inv\":12").is_ok());  // a worker killed mid-line
  EXPECT_FALSE(from_json("not json").is_ok());
}

}  // namespace
}  // namespace leasehold::torture
