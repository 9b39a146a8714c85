// tests/core/leases_test.cc: a grant's lease (Acquire::lease_ms, EndLease,
// ExtendLease) and LOCK.TRANSFER's core command (Transfer).
#include <gtest/gtest.h>

#include "core/command_codec.h"
#include "tests/core/core_test_util.h"

namespace leasehold::core::testing {
namespace {

Acquire leased(std::string lock, SessionId s, std::uint64_t lease_ms, bool wait = false, std::uint64_t delay_ms = 0) {
  Acquire a = acq(std::move(lock), s, LockMode::kExclusive, wait, 0, delay_ms);
  a.lease_ms = lease_ms;
  return a;
}

TEST(Leases, GrantWithLeaseAnnouncesItsDeadline) {
  Harness h;
  const SessionId s = h.open();
  ApplyResult r = h.run(leased("a", s, 500));
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  const auto deadlines = effects_of<LeaseDeadline>(r);
  ASSERT_EQ(deadlines.size(), 1U);
  EXPECT_EQ(deadlines[0], (LeaseDeadline{"a", s, r.reply.token, h.now + 500}));
  EXPECT_EQ(h.sm.lock("a")->holders[0].lease_until, h.now + 500);
  // Recovery re-arms it.
  const auto pending = h.sm.pending_lock_timers();
  ASSERT_EQ(pending.size(), 1U);
  EXPECT_EQ(std::get<LeaseDeadline>(pending[0]), deadlines[0]);
}

TEST(Leases, EndLeaseEndsTheGrantLikeAnExpiryAndGrantsTheNextWaiter) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const Token t = h.grant(leased("x", a, 500, false, /*delay_ms=*/0));
  h.queue(acq("x", b));
  // Not yet due: refused, nothing changes.
  h.now += 499;
  h.expect_error(EndLease{"x", a, t}, ErrorCode::kNotFound);
  h.now += 1;
  ApplyResult r = h.run(EndLease{"x", a, t});
  ASSERT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  const auto lost = effects_of<LockLost>(r);
  ASSERT_EQ(lost.size(), 1U);
  EXPECT_EQ(lost[0], (LockLost{"x", a, t, LossReason::kLeaseEnded}));
  const auto granted = effects_of<Granted>(r);
  ASSERT_EQ(granted.size(), 1U);
  EXPECT_EQ(granted[0].session, b);
  EXPECT_GT(granted[0].token, t);
  // The session lives on; a second EndLease finds nothing.
  EXPECT_TRUE(h.sm.session(a).has_value());
  h.expect_error(EndLease{"x", a, t}, ErrorCode::kNotFound);
}

TEST(Leases, EndLeaseAppliesTheLockDelayAsAnExpiry) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const Token t = h.grant(leased("x", a, 100, false, /*delay_ms=*/300));
  h.queue(acq("x", b));
  h.now += 100;
  ApplyResult r = h.run(EndLease{"x", a, t});
  ASSERT_FALSE(r.reply.is_error());
  EXPECT_TRUE(effects_of<Granted>(r).empty());
  ASSERT_EQ(effects_of<WakeAt>(r).size(), 1U);
  EXPECT_EQ(effects_of<WakeAt>(r)[0].at, h.now + 300);
  h.now += 300;
  r = h.run(Tick{});
  ASSERT_EQ(effects_of<Granted>(r).size(), 1U);
}

TEST(Leases, ExtendMovesTheEndAndAStaleEndLeaseChangesNothing) {
  Harness h;
  const SessionId a = h.open();
  const Token t = h.grant(leased("x", a, 100));
  h.now += 50;
  ApplyResult r = h.run(ExtendLease{"x", a, t, 1000}, a);
  ASSERT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  ASSERT_EQ(effects_of<LeaseDeadline>(r).size(), 1U);
  EXPECT_EQ(effects_of<LeaseDeadline>(r)[0].at, h.now + 1000);
  h.now += 50;  // the first lease's end: the timer's EndLease comes too late
  h.expect_error(EndLease{"x", a, t}, ErrorCode::kNotFound);
  h.now += 950;
  r = h.run(EndLease{"x", a, t});
  EXPECT_FALSE(r.reply.is_error());
}

TEST(Leases, ExtendRefusals) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const Token t = h.grant(leased("x", a, 100));
  const Token plain = h.grant(acq("y", a));
  h.expect_error(ExtendLease{"x", a, t + 100, 500}, ErrorCode::kStaleToken);
  h.expect_error(ExtendLease{"x", b, t, 500}, ErrorCode::kNotHolder);
  h.expect_error(ExtendLease{"y", a, plain, 500}, ErrorCode::kConflict);  // no lease
  h.expect_error(ExtendLease{"x", a, t, 0}, ErrorCode::kInvalidArgument);
  h.expect_error(ExtendLease{"x", a, t, kMaxSessionTtlMs + 1}, ErrorCode::kLimitExceeded);
  h.expect_error(ExtendLease{"x", 999, t, 500}, ErrorCode::kSessionExpired);
  h.expect_error(leased("z", a, kMaxSessionTtlMs + 1), ErrorCode::kLimitExceeded);
}

TEST(Leases, AWaiterLeaseStartsAtItsGrant) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const Token t = h.grant(acq("x", a));
  h.queue(leased("x", b, 200));
  h.now += 1000;
  ApplyResult r = h.run(Release{"x", a, t});
  const auto deadlines = effects_of<LeaseDeadline>(r);
  ASSERT_EQ(deadlines.size(), 1U);
  EXPECT_EQ(deadlines[0].session, b);
  EXPECT_EQ(deadlines[0].at, h.now + 200);
}

TEST(Leases, SnapshotAndCodecKeepLeases) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  h.grant(leased("x", a, 700));
  h.queue(leased("x", b, 300));
  const std::string image = h.sm.snapshot();
  auto restored = StateMachine::restore(image);
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  EXPECT_EQ(restored->snapshot(), image);
  EXPECT_EQ(restored->lock("x")->holders[0].lease_until, h.now + 700);

  Command c;
  c.body = leased("x", a, 42);
  auto back = decode_command(encode_command(c));
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(std::get<Acquire>(back->body).lease_ms, 42U);
  for (CommandBody body : {CommandBody{EndLease{"x", 1, 2}}, CommandBody{ExtendLease{"x", 1, 2, 3}},
                           CommandBody{Transfer{"x", 1, 2, 3}}}) {
    c.body = body;
    const std::string bytes = encode_command(c);
    auto d = decode_command(bytes);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(encode_command(*d), bytes);
  }
}

TEST(Transfer, MovesTheGrantWithAHigherTokenAndKeepsTheQueue) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const SessionId w1 = h.open();
  const SessionId w2 = h.open();
  const Token t = h.grant(leased("x", a, 5000));
  h.queue(acq("x", w1));
  h.queue(acq("x", w2));
  h.now += 100;
  ApplyResult r = h.run(Transfer{"x", a, t, b}, a);
  ASSERT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  EXPECT_GT(r.reply.token, t);
  EXPECT_EQ(effects_of<LockLost>(r), (std::vector<LockLost>{{"x", a, t, LossReason::kTransferred}}));
  EXPECT_EQ(effects_of<Granted>(r), (std::vector<Granted>{{"x", b, 0, r.reply.token}}));
  // The lease end carries over: a max hold is not reset by handing the lock on.
  EXPECT_EQ(effects_of<LeaseDeadline>(r), (std::vector<LeaseDeadline>{{"x", b, r.reply.token, 1000 + 5000}}));
  const auto info = h.sm.lock("x");
  ASSERT_EQ(info->holders.size(), 1U);
  EXPECT_EQ(info->holders[0].session, b);
  ASSERT_EQ(info->waiters.size(), 2U);
  EXPECT_EQ(info->waiters[0].session, w1);
  EXPECT_EQ(info->waiters[1].session, w2);
  // The old token is stale everywhere now.
  h.expect_error(Release{"x", a, t}, ErrorCode::kNotHolder);
  h.expect_error(FencePut{"k", "v", "x", t}, ErrorCode::kStaleToken);
  EXPECT_FALSE(h.run(FencePut{"k", "v", "x", r.reply.token}).reply.is_error());
  // The new holder releases; the first waiter gets it.
  r = h.run(Release{"x", b, info->holders[0].token});
  ASSERT_EQ(effects_of<Granted>(r).size(), 1U);
  EXPECT_EQ(effects_of<Granted>(r)[0].session, w1);
  // Restores the same.
  auto restored = StateMachine::restore(h.sm.snapshot());
  ASSERT_TRUE(restored.is_ok());
  EXPECT_EQ(restored->snapshot(), h.sm.snapshot());
}

TEST(Transfer, Refusals) {
  Harness h;
  const SessionId a = h.open();
  const SessionId b = h.open();
  const SessionId w = h.open();
  const Token t = h.grant(acq("x", a));
  h.grant(acq("y", b));
  h.queue(acq("x", w));
  h.expect_error(Transfer{"x", a, t + 50, b}, ErrorCode::kStaleToken);
  h.expect_error(Transfer{"x", b, t, a}, ErrorCode::kNotHolder);
  h.expect_error(Transfer{"x", a, t, 4242}, ErrorCode::kNotFound);  // dead/unknown target
  h.expect_error(Transfer{"x", a, t, w}, ErrorCode::kConflict);     // already queued on it
  h.expect_error(Transfer{"x", a, t, a}, ErrorCode::kInvalidArgument);
  h.expect_error(Transfer{"x", 777, t, b}, ErrorCode::kSessionExpired);
  ASSERT_FALSE(h.run(CloseSession{b}).reply.is_error());
  h.expect_error(Transfer{"x", a, t, b}, ErrorCode::kNotFound);  // closed target
  // Shared holders: a target that already holds is refused.
  const SessionId r1 = h.open();
  const SessionId r2 = h.open();
  const Token s1 = h.grant(acq("s", r1, LockMode::kShared));
  h.grant(acq("s", r2, LockMode::kShared));
  h.expect_error(Transfer{"s", r1, s1, r2}, ErrorCode::kConflict);
}

}  // namespace
}  // namespace leasehold::core::testing
