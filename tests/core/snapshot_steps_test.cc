// The snapshot encoded in steps (StateMachine::begin_snapshot /
// snapshot_step / finish_snapshot): whatever commands run between the
// steps, the image is byte for byte snapshot() at begin_snapshot(). Random
// streams (random_commands.h, plus sessions with users and Reopen) between
// steps of random sizes; replay a failure with LEASEHOLD_SEED=<seed>.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/snapshot_format.h"
#include "core/state_machine.h"
#include "random_commands.h"

namespace leasehold::core::testing {
namespace {

Command open_with_user(LogMillis now, const std::string& user) {
  Command c;
  c.now = now;
  c.body = OpenSession{1'000, "o", user};
  return c;
}

// Finishes the image in progress, running `between` after each step that
// did not finish it.
template <typename Between>
std::string finish_in_steps(StateMachine& sm, std::mt19937_64& rng, Between between) {
  while (!sm.snapshot_step(1 + rng() % 4)) between();
  return StateMachine::join_snapshot(sm.finish_snapshot());
}

class SnapshotSteps : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(SnapshotSteps, CommandsBetweenTheStepsNeverReachTheImage) {
  const std::uint64_t seed = seed_from_env(GetParam());
  SCOPED_TRACE("replay with LEASEHOLD_SEED=" + std::to_string(seed));
  StateMachine sm(small_limits());
  RandomCommands gen(seed);
  std::mt19937_64 rng(seed);
  std::size_t applied_between = 0;
  std::size_t images_with_users = 0;
  const auto apply_one = [&] {
    gen.prune(sm);
    Command c = gen.next(sm);
    const std::uint64_t pick = rng() % 100;
    if (pick < 3) {
      c = open_with_user(c.now, "u" + std::to_string(rng() % 3));
    } else if (pick == 3) {
      c.body = Reopen{sm.revision() + 1 + rng() % 5, rng() % 2 == 0, rng() % 200};
      c.session = 0;
      c.seq = 0;
    }
    gen.observe(c, sm.apply(c));
  };
  for (int round = 0; round < 400; ++round) {
    for (std::uint64_t i = rng() % 30; i > 0; --i) apply_one();
    const std::string expected = sm.snapshot();
    const std::size_t sessions_at_begin = sm.session_count();
    sm.begin_snapshot();
    ASSERT_TRUE(sm.snapshot_in_progress());
    const std::string image = finish_in_steps(sm, rng, [&] {
      for (std::uint64_t i = rng() % 4; i > 0; --i) {
        apply_one();
        ++applied_between;
      }
    });
    ASSERT_FALSE(sm.snapshot_in_progress());
    ASSERT_EQ(image, expected) << "round " << round;
    Result<StateMachine> back = StateMachine::restore(image, small_limits());
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    ASSERT_EQ(back->session_count(), sessions_at_begin);
    if (image[4] == 3) ++images_with_users;
  }
  EXPECT_GT(applied_between, 1'000U);
  EXPECT_GT(images_with_users, 0U);  // the stream reached the version with users
}

INSTANTIATE_TEST_SUITE_P(Seeds, SnapshotSteps, ::testing::Values(11, 12, 13));

TEST(SnapshotStepsUnit, SessionsOpenedOrEndedDuringTheStepsKeepTheImageAtBegin) {
  StateMachine sm;
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(sm.apply(open_with_user(1, i % 2 == 0 ? "" : "u")).reply.is_error());
  const std::string expected = sm.snapshot();
  sm.begin_snapshot();
  ASSERT_FALSE(sm.snapshot_step(10));
  // End every session (those written and those not yet), open new ones.
  for (SessionId id = 1; id <= 100; ++id) {
    Command c;
    c.now = 2;
    c.body = CloseSession{id};
    ASSERT_FALSE(sm.apply(c).reply.is_error());
  }
  for (int i = 0; i < 50; ++i) ASSERT_FALSE(sm.apply(open_with_user(3, "")).reply.is_error());
  while (!sm.snapshot_step(7)) {
  }
  EXPECT_EQ(StateMachine::join_snapshot(sm.finish_snapshot()), expected);
  EXPECT_EQ(sm.session_count(), 50U);
  EXPECT_EQ(sm.snapshot()[4], 2) << "no session has a user any more: the version without users";
}

// The empty state's image with its revision replaced by `revision` (and its
// checksum redone), restored.
StateMachine restored_at_revision(Revision revision) {
  std::string image = StateMachine().snapshot();
  image.resize(image.size() - 4);
  EXPECT_EQ(image[5], 0);  // "LHSM", version, then the revision's varint
  std::string varint;
  Revision v = revision;
  for (; v >= 0x80; v >>= 7) varint.push_back(static_cast<char>((v & 0x7fU) | 0x80U));
  varint.push_back(static_cast<char>(v));
  image.replace(5, 1, varint);
  const std::uint32_t crc = detail::snapshot_crc(image);
  for (int i = 0; i < 4; ++i) image.push_back(static_cast<char>((crc >> (8 * i)) & 0xffU));
  Result<StateMachine> sm = StateMachine::restore(image);
  if (!sm.is_ok()) {
    ADD_FAILURE() << sm.status().to_string();
    return StateMachine();
  }
  EXPECT_EQ(sm->revision(), revision);
  return std::move(*sm);
}

// The streamed form (what the node hands a log that streams snapshots):
// the pieces taken between the steps, the rest from finish_snapshot() and
// the trailer over all of them are byte for byte the joined image, with
// sessions changed between the steps. 150,000 sessions make several 1 MiB
// pieces, so some are taken before the image is done.
TEST(SnapshotStepsUnit, StreamedPiecesAndTheirTrailerAreTheJoinedImage) {
  StateMachine sm;
  const std::string owner(12, 'o');
  for (int i = 0; i < 150'000; ++i) {
    Command c;
    c.now = 1;
    c.body = OpenSession{60'000, owner, ""};
    ASSERT_FALSE(sm.apply(c).reply.is_error());
  }
  const std::string expected = sm.snapshot();
  sm.begin_snapshot();
  std::string streamed;
  std::uint32_t crc = 0;
  std::size_t taken_early = 0;
  const auto take = [&](std::vector<std::string> pieces) {
    for (const std::string& piece : pieces) {
      crc = StateMachine::snapshot_checksum(piece, crc);
      streamed += piece;
    }
    return pieces.size();
  };
  SessionId closing = 150'000;
  while (!sm.snapshot_step(10'000)) {
    taken_early += take(sm.take_snapshot_pieces());
    Command c;
    c.now = 2;
    c.body = CloseSession{closing--};  // not written yet: copied as it was
    ASSERT_FALSE(sm.apply(c).reply.is_error());
  }
  take(sm.finish_snapshot());
  streamed += StateMachine::snapshot_trailer(crc);
  EXPECT_GE(taken_early, 2U);
  EXPECT_EQ(streamed, expected);
  auto restored = StateMachine::restore(streamed);
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  EXPECT_EQ(restored->session_count(), 150'000U);
}

TEST(SnapshotStepsUnit, ARestoredImageAtTheLastRevisionRefusesCommandsInsteadOfWrapping) {
  // Found by fuzz_snapshot (its input fuzz/corpus/snapshot/crash-revision-max):
  // an image whose revision is 2^64-1 restored, then a command wrapped the
  // revision to 0 and stopped the process on the always-on assert. Here the
  // empty state's image with that revision.
  StateMachine sm = restored_at_revision(std::numeric_limits<Revision>::max());
  const std::string before = sm.snapshot();
  const ApplyResult r = sm.apply(open_with_user(1, ""));
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(sm.snapshot(), before);
}

TEST(SnapshotStepsUnit, ASessionWhoseIdIsTheLargestRevisionIsWritten) {
  // Found by fuzz_snapshot (input fuzz/corpus/snapshot/crash-session-id-max):
  // a session opened at the last revision has the id 2^64-1, which the
  // encoder used as its "no more sessions" mark; the image left it out and
  // the always-on assert stopped the process.
  constexpr Revision kMax = std::numeric_limits<Revision>::max();
  StateMachine sm = restored_at_revision(kMax - 1);
  const ApplyResult r = sm.apply(open_with_user(1, ""));
  ASSERT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  ASSERT_EQ(r.reply.session, kMax);
  const std::string whole = sm.snapshot();
  Result<StateMachine> again = StateMachine::restore(whole);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again->sessions().size(), 1U);
  sm.begin_snapshot();
  EXPECT_TRUE(sm.snapshot_step(1));
  EXPECT_EQ(StateMachine::join_snapshot(sm.finish_snapshot()), whole);
}

TEST(SnapshotStepsUnit, AnEmptyStateTakesOneStep) {
  StateMachine sm;
  const std::string expected = sm.snapshot();
  sm.begin_snapshot();
  EXPECT_TRUE(sm.snapshot_step(1));
  EXPECT_EQ(StateMachine::join_snapshot(sm.finish_snapshot()), expected);
}

TEST(SnapshotStepsUnit, ReplacingOrAbandoningTheStateDropsTheImage) {
  StateMachine sm;
  ASSERT_FALSE(sm.apply(open_with_user(1, "")).reply.is_error());
  sm.begin_snapshot();
  sm = StateMachine();
  EXPECT_FALSE(sm.snapshot_in_progress());
  sm.begin_snapshot();
  sm.abandon_snapshot();
  EXPECT_FALSE(sm.snapshot_in_progress());
  sm.begin_snapshot();  // allowed again
  EXPECT_TRUE(sm.snapshot_step(1));
}

TEST(SnapshotStepsDeathTest, ASecondBeginOrAnEarlyFinishStops) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  StateMachine sm;
  for (int i = 0; i < 10; ++i) ASSERT_FALSE(sm.apply(open_with_user(1, "")).reply.is_error());
  sm.begin_snapshot();
  EXPECT_DEATH(sm.begin_snapshot(), "another was in progress");
  EXPECT_DEATH((void)sm.finish_snapshot(), "before its last session");
}

}  // namespace
}  // namespace leasehold::core::testing
