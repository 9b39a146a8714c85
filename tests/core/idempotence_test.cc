// Unit tests: the (session, seq) idempotence window.
#include <gtest/gtest.h>

#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

TEST(CoreIdempotence, RetryReturnsFirstReplyWithoutChange) {
  Harness h;
  SessionId a = h.open();
  ApplyResult first = h.run(acq("L", a), a, 1);
  ASSERT_EQ(first.reply.code, ReplyCode::kOk);
  const std::string snap = h.sm.snapshot();
  ApplyResult again = h.run(acq("L", a), a, 1);
  EXPECT_EQ(again.reply, first.reply);
  EXPECT_TRUE(again.effects.empty());
  EXPECT_EQ(h.sm.snapshot(), snap);
}

TEST(CoreIdempotence, QueuedRetryNeverEnqueuesTwiceAndBecomesTheGrant) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a));
  ApplyResult q = h.run(acq("L", b, LockMode::kExclusive, true), b, 7);
  ASSERT_EQ(q.reply.code, ReplyCode::kQueued);
  ApplyResult q2 = h.run(acq("L", b, LockMode::kExclusive, true), b, 7);
  EXPECT_EQ(q2.reply.code, ReplyCode::kQueued);
  EXPECT_EQ(h.sm.lock("L")->waiters.size(), 1U);
  ApplyResult rel = h.run(Release{"L", a, t});
  auto g = effects_of<Granted>(rel);
  ASSERT_EQ(g.size(), 1U);
  EXPECT_EQ(g[0].seq, 7U);
  ApplyResult q3 = h.run(acq("L", b, LockMode::kExclusive, true), b, 7);
  EXPECT_EQ(q3.reply.code, ReplyCode::kOk);
  EXPECT_EQ(q3.reply.token, g[0].token);
  EXPECT_TRUE(q3.effects.empty());
}

// The server releases the grant of a client that left before reading it
// (WaitsAndPushes::abandon_wait); that client's retry with the same seq on a new
// connection must not be told it holds the lock, which by then is the next
// waiter's (found by the torture suite: two holders of x0).
TEST(CoreIdempotence, ARetryIsNotToldItHoldsAGrantThatWasReleased) {
  Harness h;
  SessionId a = h.open(), b = h.open(), c = h.open();
  Token t = h.grant(acq("L", a));
  ASSERT_EQ(h.run(acq("L", b, LockMode::kExclusive, true), b, 7).reply.code, ReplyCode::kQueued);
  ASSERT_EQ(h.run(acq("L", c, LockMode::kExclusive, true), c, 1).reply.code, ReplyCode::kQueued);
  auto g = effects_of<Granted>(h.run(Release{"L", a, t}));
  ASSERT_EQ(g.size(), 1U);
  ASSERT_EQ(g[0].session, b);
  auto next = effects_of<Granted>(h.run(Release{"L", b, g[0].token}));  // b's client left
  ASSERT_EQ(next.size(), 1U);
  EXPECT_EQ(next[0].session, c);
  ApplyResult retry = h.run(acq("L", b, LockMode::kExclusive, true), b, 7);
  ASSERT_TRUE(retry.reply.is_error()) << "the retry was told it holds token " << retry.reply.token;
  EXPECT_EQ(retry.reply.error.code(), ErrorCode::kWouldBlock);
  EXPECT_TRUE(retry.effects.empty());
  EXPECT_EQ(h.sm.lock("L")->holders.size(), 1U);
}

TEST(CoreIdempotence, ARetryIsNotToldItHoldsARevokedGrant) {
  Harness h;
  SessionId a = h.open();
  ASSERT_EQ(h.run(acq("L", a), a, 3).reply.code, ReplyCode::kOk);
  h.run(Revoke{"L"});
  ApplyResult retry = h.run(acq("L", a), a, 3);
  ASSERT_TRUE(retry.reply.is_error());
  EXPECT_EQ(retry.reply.error.code(), ErrorCode::kWouldBlock);
  EXPECT_FALSE(h.sm.lock("L").has_value());
}

TEST(CoreIdempotence, EndedWaitIsRemembered) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  h.grant(acq("L", a));
  h.run(acq("L", b, LockMode::kExclusive, true, 100), b, 1);
  h.run(TimeoutWait{"L", b});
  ApplyResult r = h.run(acq("L", b, LockMode::kExclusive, true, 100), b, 1);
  ASSERT_TRUE(r.reply.is_error());
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kTimedOut);
  EXPECT_EQ(h.sm.lock("L")->waiters.size(), 0U);
  h.run(acq("L", b, LockMode::kExclusive, true), b, 2);
  h.run(CancelWait{"L", b});
  r = h.run(acq("L", b, LockMode::kExclusive, true), b, 2);
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kWouldBlock);
}

TEST(CoreIdempotence, ErrorsAreRememberedToo) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a));
  ApplyResult r = h.run(acq("L", b), b, 1);
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kWouldBlock);
  EXPECT_EQ(h.sm.revision(), 2U + 1U);  // the error did not bump the revision
  h.run(Release{"L", a, t});
  r = h.run(acq("L", b), b, 1);  // retry: still the first answer
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kWouldBlock);
  EXPECT_EQ(h.sm.lock_count(), 0U);
}

TEST(CoreIdempotence, WindowAndTooOld) {
  Limits lim;
  lim.idempotence_window = 3;
  Harness h(lim);
  SessionId a = h.open();
  for (std::uint64_t seq = 1; seq <= 5; ++seq) {
    ASSERT_EQ(h.run(acq("L" + std::to_string(seq), a), a, seq).reply.code, ReplyCode::kOk);
  }
  // 3, 4, 5 remembered; 1 and 2 are too old.
  EXPECT_EQ(h.run(acq("L3", a), a, 3).reply.code, ReplyCode::kOk);
  h.expect_error(acq("L2", a), ErrorCode::kInvalidArgument, a, 2);
  h.expect_error(acq("L1", a), ErrorCode::kInvalidArgument, a, 1);
  // A gap inside the window is a new command.
  ASSERT_EQ(h.run(acq("X", a), a, 9).reply.code, ReplyCode::kOk);
  ApplyResult r7 = h.run(acq("Y", a), a, 7);
  EXPECT_EQ(r7.reply.code, ReplyCode::kOk);
  EXPECT_EQ(h.sm.lock("Y")->holders.size(), 1U);
  h.expect_error(acq("Z", a), ErrorCode::kInvalidArgument, a, 6);
}

TEST(CoreIdempotence, EnvelopeErrors) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  h.expect_error(acq("L", a), ErrorCode::kInvalidArgument, 0, 1);    // seq without session
  h.expect_error(acq("L", a), ErrorCode::kSessionExpired, 999, 1);   // unknown session
  h.expect_error(acq("L", a), ErrorCode::kInvalidArgument, b, 0);    // session mismatch
  h.run(CloseSession{a}, a, 1);
  h.expect_error(acq("L", a), ErrorCode::kSessionExpired, a, 1);     // retry after end
}

TEST(CoreIdempotence, IdleSessionsAllocateNoWindow) {
  Harness h;
  SessionId a = h.open();
  const std::size_t before = h.sm.snapshot().size();
  h.run(acq("L", a), a, 1);
  EXPECT_GT(h.sm.snapshot().size(), before + 4);
}

}  // namespace
}  // namespace leasehold::core::testing
