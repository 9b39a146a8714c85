// Unit tests: Acquire/Release/CancelWait/TimeoutWait/Revoke and the FIFO queue.
#include <gtest/gtest.h>

#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

TEST(CoreLocks, ExclusiveGrantReleaseAndTokens) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t1 = h.grant(acq("L", a));
  EXPECT_EQ(t1, h.sm.revision());
  h.expect_error(acq("L", b), ErrorCode::kWouldBlock);
  auto info = h.sm.lock("L");
  ASSERT_TRUE(info);
  ASSERT_EQ(info->holders.size(), 1U);
  EXPECT_EQ(info->holders[0].session, a);
  EXPECT_EQ(info->holders[0].owner, "owner");
  EXPECT_EQ(info->last_token, t1);
  ASSERT_EQ(h.run(Release{"L", a, t1}).reply.code, ReplyCode::kOk);
  EXPECT_EQ(h.sm.lock_count(), 0U);
  Token t2 = h.grant(acq("L", b));
  EXPECT_GT(t2, t1);
}

TEST(CoreLocks, QueueGrantsInFifoOrderOnRelease) {
  Harness h;
  SessionId a = h.open(), b = h.open(), c = h.open();
  Token t = h.grant(acq("L", a));
  h.queue(acq("L", b), 1);
  h.queue(acq("L", c));
  ApplyResult r = h.run(Release{"L", a, t});
  auto g = effects_of<Granted>(r);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0], (Granted{"L", b, 1, h.sm.revision()}));
  r = h.run(Release{"L", b, g[0].token});
  g = effects_of<Granted>(r);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, c);
  EXPECT_GT(g[0].token, t);
}

TEST(CoreLocks, SharedReadersTogetherWriterBlocksLaterReaders) {
  Harness h;
  SessionId r1 = h.open(), r2 = h.open(), w = h.open(), r3 = h.open(), r4 = h.open();
  Token t1 = h.grant(acq("L", r1, LockMode::kShared));
  Token t2 = h.grant(acq("L", r2, LockMode::kShared));
  EXPECT_EQ(h.sm.lock("L")->mode, LockMode::kShared);
  h.queue(acq("L", w, LockMode::kExclusive));
  h.queue(acq("L", r3, LockMode::kShared));  // behind the writer: must wait
  h.expect_error(acq("L", r4, LockMode::kShared), ErrorCode::kWouldBlock);
  h.queue(acq("L", r4, LockMode::kShared));
  EXPECT_TRUE(effects_of<Granted>(h.run(Release{"L", r1, t1})).empty());
  auto g = effects_of<Granted>(h.run(Release{"L", r2, t2}));
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, w);
  g = effects_of<Granted>(h.run(Release{"L", w, g[0].token}));
  ASSERT_EQ(g.size(), 2U);  // both readers together, one token
  EXPECT_EQ(g[0].session, r3);
  EXPECT_EQ(g[1].session, r4);
  EXPECT_EQ(g[0].token, g[1].token);
  EXPECT_EQ(h.sm.lock("L")->holders.size(), 2U);
}

TEST(CoreLocks, SemaphoreGrantsPermitsInOrder) {
  Harness h;
  SessionId s[5];
  for (auto& id : s) id = h.open();
  Token t0 = h.grant(sem("S", s[0], 2));
  h.grant(sem("S", s[1], 2));
  h.queue(sem("S", s[2], 2));
  h.queue(sem("S", s[3], 2));
  h.expect_error(sem("S", s[4], 2), ErrorCode::kWouldBlock);
  h.expect_error(sem("S", s[4], 3), ErrorCode::kConflict);
  h.expect_error(acq("S", s[4]), ErrorCode::kConflict);
  auto g = effects_of<Granted>(h.run(Release{"S", s[0], t0}));
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, s[2]);
  ApplyResult k = h.run(KillSession{s[1]});
  g = effects_of<Granted>(k);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, s[3]);
  EXPECT_EQ(h.sm.lock("S")->limit, 2U);
  EXPECT_EQ(h.sm.lock("S")->mode, LockMode::kSemaphore);
}

TEST(CoreLocks, CancelHeadWriterLetsReadersThrough) {
  Harness h;
  SessionId r1 = h.open(), w = h.open(), r2 = h.open();
  h.grant(acq("L", r1, LockMode::kShared));
  h.queue(acq("L", w));
  h.queue(acq("L", r2, LockMode::kShared));
  ApplyResult r = h.run(CancelWait{"L", w});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  EXPECT_EQ(effects_of<WaitEnded>(r)[0], (WaitEnded{"L", w, 0, WaitEndReason::kCancelled}));
  auto g = effects_of<Granted>(r);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, r2);
}

TEST(CoreLocks, WaitDeadlineAndTimeout) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  h.grant(acq("L", a));
  ApplyResult q = h.run(acq("L", b, LockMode::kExclusive, true, 300));
  ASSERT_EQ(q.reply.code, ReplyCode::kQueued);
  ASSERT_EQ(effects_of<WaitDeadline>(q).size(), 1U);
  EXPECT_EQ(effects_of<WaitDeadline>(q)[0], (WaitDeadline{"L", b, 1'300}));
  EXPECT_EQ(h.sm.lock("L")->waiters.at(0).deadline, 1'300U);
  auto timers = h.sm.pending_timers();
  EXPECT_EQ(timers.size(), 3U);  // two sessions + one deadline
  ApplyResult t = h.run(TimeoutWait{"L", b});
  ASSERT_EQ(t.reply.code, ReplyCode::kOk);
  EXPECT_EQ(effects_of<WaitEnded>(t)[0].reason, WaitEndReason::kTimedOut);
  h.expect_error(TimeoutWait{"L", b}, ErrorCode::kNotFound);
  h.expect_error(TimeoutWait{"nope", b}, ErrorCode::kNotFound);
  h.expect_error(TimeoutWait{"L", 999}, ErrorCode::kNotFound);
  h.expect_error(CancelWait{"L", b}, ErrorCode::kNotFound);
  h.expect_error(CancelWait{"L", 999}, ErrorCode::kSessionExpired);
}

TEST(CoreLocks, ReleaseErrors) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a));
  h.queue(acq("L", b));
  h.expect_error(Release{"L", a, t + 1}, ErrorCode::kStaleToken);
  h.expect_error(Release{"L", a, t - 1}, ErrorCode::kStaleToken);
  h.expect_error(Release{"L", b, t}, ErrorCode::kNotHolder);  // waiting is not holding
  h.expect_error(Release{"M", a, t}, ErrorCode::kNotHolder);
  h.expect_error(Release{"L", 999, t}, ErrorCode::kSessionExpired);
  h.expect_error(Release{"", a, t}, ErrorCode::kInvalidArgument);
}

// A release that was not the holder's own request tells the holder (LockLost
// with its own reason); the holder's own release does not.
TEST(CoreLocks, ReleaseByAnotherIsALossForTheHolder) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a));
  h.queue(acq("L", b), 1);
  ApplyResult r = h.run(Release{"L", a, t, true});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  auto lost = effects_of<LockLost>(r);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0], (LockLost{"L", a, t, LossReason::kReleasedByOther}));
  auto g = effects_of<Granted>(r);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, b);
  EXPECT_TRUE(effects_of<LockLost>(h.run(Release{"L", b, g[0].token})).empty());
  // A refused release by another changes nothing and tells nobody.
  Token t2 = h.grant(acq("L", a));
  ApplyResult stale = h.run(Release{"L", a, t2 + 1, true});
  EXPECT_TRUE(stale.reply.is_error());
  EXPECT_TRUE(effects_of<LockLost>(stale).empty());
}

TEST(CoreLocks, AcquireMalformedAndConflicts) {
  Limits lim;
  lim.max_name_bytes = 8;
  Harness h(lim);
  SessionId a = h.open(), b = h.open();
  h.expect_error(acq("", a), ErrorCode::kInvalidArgument);
  h.expect_error(acq("123456789", a), ErrorCode::kLimitExceeded);
  h.expect_error(acq("L", 0), ErrorCode::kSessionExpired);
  h.expect_error(acq("L", 999), ErrorCode::kSessionExpired);
  h.expect_error(acq("L", a, LockMode::kExclusive, false, 0, 0, 2), ErrorCode::kInvalidArgument);
  h.expect_error(acq("L", a, LockMode::kShared, false, 0, 0, 0), ErrorCode::kInvalidArgument);
  h.expect_error(sem("L", a, 0), ErrorCode::kInvalidArgument);
  h.expect_error(acq("L", a, static_cast<LockMode>(7)), ErrorCode::kInvalidArgument);
  h.expect_error(acq("L", a, LockMode::kExclusive, false, 100), ErrorCode::kInvalidArgument);
  h.expect_error(acq("L", a, LockMode::kExclusive, true, lim.max_wait_ms + 1), ErrorCode::kLimitExceeded);
  h.expect_error(acq("L", a, LockMode::kExclusive, false, 0, lim.max_delay_ms + 1),
                 ErrorCode::kLimitExceeded);
  h.grant(acq("L", a));
  h.expect_error(acq("L", a), ErrorCode::kConflict);  // already holds
  h.expect_error(sem("L", b, 3), ErrorCode::kConflict);  // kind mismatch
  h.queue(acq("L", b));
  h.expect_error(acq("L", b, LockMode::kExclusive, true), ErrorCode::kConflict);  // already waits
}

TEST(CoreLocks, CountLimits) {
  Limits lim;
  lim.max_locks = 1;
  lim.max_waiters_per_lock = 1;
  lim.max_holders_per_lock = 2;
  Harness h(lim);
  SessionId a = h.open(), b = h.open(), c = h.open(), d = h.open();
  h.grant(acq("L", a, LockMode::kShared));
  h.expect_error(acq("M", a), ErrorCode::kLimitExceeded);
  h.grant(acq("L", b, LockMode::kShared));
  h.expect_error(acq("L", c, LockMode::kShared), ErrorCode::kWouldBlock);  // holder cap
  h.queue(acq("L", c, LockMode::kShared));
  h.expect_error(acq("L", d, LockMode::kShared, true), ErrorCode::kLimitExceeded);
  h.expect_error(sem("S", d, 3), ErrorCode::kLimitExceeded);
}

TEST(CoreLocks, RevokeAnnouncesAndGrants) {
  Harness h;
  SessionId a = h.open(), b = h.open(), c = h.open();
  Token ta = h.grant(acq("L", a, LockMode::kShared));
  Token tb = h.grant(acq("L", b, LockMode::kShared));
  h.queue(acq("L", c));
  ApplyResult r = h.run(Revoke{"L"});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  auto lost = effects_of<LockLost>(r);
  ASSERT_EQ(lost.size(), 2U);
  EXPECT_EQ(lost[0], (LockLost{"L", a, ta, LossReason::kRevoked}));
  EXPECT_EQ(lost[1], (LockLost{"L", b, tb, LossReason::kRevoked}));
  ASSERT_EQ(effects_of<Granted>(r).size(), 1U);
  EXPECT_EQ(h.sm.session(a)->held, 0U);
  h.expect_error(Release{"L", a, ta}, ErrorCode::kNotHolder);
  h.expect_error(Revoke{"nope"}, ErrorCode::kNotFound);
  h.expect_error(Revoke{""}, ErrorCode::kInvalidArgument);
}

TEST(CoreLocks, QueueDuringDelayThenFifo) {
  Harness h;
  SessionId a = h.open(), b = h.open(), c = h.open();
  h.grant(acq("L", a, LockMode::kExclusive, false, 0, 100));
  h.run(ExpireSession{a});
  h.queue(acq("L", b));  // queued during the delay
  h.now = 1'200;         // delay over; c arrives before any Tick: must queue behind b
  ApplyResult r = h.run(acq("L", c, LockMode::kExclusive, true));
  EXPECT_EQ(r.reply.code, ReplyCode::kQueued);
  auto g = effects_of<Granted>(r);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].session, b);
  EXPECT_EQ(h.sm.lock("L")->waiters.at(0).session, c);
}

TEST(CoreLocks, ListInNameOrderWithPrefix) {
  Harness h;
  SessionId a = h.open();
  for (const char* n : {"job/3", "job/1", "x", "job/2"}) h.grant(acq(n, a));
  auto all = h.sm.locks("job/", 10);
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].name, "job/1");
  EXPECT_EQ(all[2].name, "job/3");
  auto two = h.sm.locks("", 2);
  ASSERT_EQ(two.size(), 2U);
  EXPECT_EQ(two[1].name, "job/2");
}

TEST(CoreLocks, TimeNeverGoesBackwards) {
  Harness h;
  h.now = 5'000;
  SessionId a = h.open();
  h.now = 10;  // a confused proposer: core keeps its clock
  h.grant(acq("L", a));
  EXPECT_EQ(h.sm.last_now(), 5'000U);
  EXPECT_EQ(h.sm.lock("L")->holders[0].acquired_at, 5'000U);
}

}  // namespace
}  // namespace leasehold::core::testing
