// Primary timers driven by the manual clock: session expiry, keepalive, wait
// deadlines, lock-delay ticks.
#include <gtest/gtest.h>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using std::chrono::milliseconds;
using testing::effects_of;
using testing::NodeHarness;

TEST(NodeTimers, SessionExpiresOnlyAfterItsTtlWithoutKeepalive) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(1000);
  ASSERT_EQ(h.node().next_timer_deadline(), h.clock().now() + milliseconds(1000));
  h.clock().advance(milliseconds(999));
  const int appends = h.control().append_count();
  h.fire_due_timers();
  EXPECT_EQ(h.control().append_count(), appends) << "proposed an expiry before the TTL";
  EXPECT_TRUE(h.node().state().session(s).has_value());
  EXPECT_EQ(*h.node().remaining_ms(s), 1u);

  h.clock().advance(milliseconds(1));
  h.control().set_hold(true);
  h.node().run_due_timers();
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() == appends + 1; }));
  // Due but in flight: not proposed again, no longer keepalive-able.
  h.node().run_due_timers();
  h.clock().advance(milliseconds(5000));
  h.node().run_due_timers();
  h.loop().run_for(milliseconds(50));  // a second proposal would be queued by now
  EXPECT_EQ(h.node().stats().pending_proposals, 1u) << "expiry proposed twice";
  EXPECT_EQ(h.control().append_count(), appends + 1) << "expiry proposed twice";
  EXPECT_EQ(h.node().keepalive(s).status().code(), ErrorCode::kSessionExpired);
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return !h.node().state().session(s).has_value(); }));
  auto ended = effects_of<core::SessionEnded>(h.effects());
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].session, s);
  EXPECT_EQ(ended[0].reason, core::SessionEndReason::kExpired);
  EXPECT_EQ(h.node().remaining_ms(s).status().code(), ErrorCode::kSessionExpired);
  EXPECT_FALSE(h.node().next_timer_deadline().has_value());
}

TEST(NodeTimers, KeepaliveExtendsTheDeadlineWithoutALogWrite) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(1000);
  h.clock().advance(milliseconds(600));
  const int appends = h.control().append_count();
  auto ka = h.node().keepalive(s);
  ASSERT_TRUE(ka.is_ok());
  EXPECT_EQ(*ka, 1000u);
  EXPECT_EQ(h.control().append_count(), appends) << "keepalive wrote to the log";
  h.clock().advance(milliseconds(600));  // 1200 after open, 600 after keepalive
  h.fire_due_timers();
  EXPECT_TRUE(h.node().state().session(s).has_value());
  EXPECT_EQ(*h.node().remaining_ms(s), 400u);
  h.clock().advance(milliseconds(400));
  h.fire_due_timers();
  EXPECT_FALSE(h.node().state().session(s).has_value());
}

TEST(NodeTimers, KeepaliveAfterTheDeadlineIsRefused) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(100);
  h.clock().advance(milliseconds(100));
  EXPECT_EQ(h.node().keepalive(s).status().code(), ErrorCode::kSessionExpired);
  EXPECT_EQ(h.node().keepalive(424242).status().code(), ErrorCode::kSessionExpired);
}

TEST(NodeTimers, CloseSessionStopsItsTimer) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(100);
  ASSERT_FALSE(h.commit(core::CloseSession{s}).reply.is_error());
  EXPECT_FALSE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(h.node().stats().timed_sessions, 0u);
}

TEST(NodeTimers, SetSessionTtlRestartsTheTimer) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(1000);
  h.clock().advance(milliseconds(900));
  ASSERT_FALSE(h.commit(core::SetSessionTtl{s, 5000}).reply.is_error());
  EXPECT_EQ(*h.node().remaining_ms(s), 5000u);
  h.clock().advance(milliseconds(4999));
  h.fire_due_timers();
  EXPECT_TRUE(h.node().state().session(s).has_value());
  h.clock().advance(milliseconds(1));
  h.fire_due_timers();
  EXPECT_FALSE(h.node().state().session(s).has_value());
}

TEST(NodeTimers, QueuedWaitTimesOutAtItsDeadline) {
  NodeHarness h;
  h.open();
  const core::SessionId a = h.open_session(60'000);
  const core::SessionId b = h.open_session(60'000);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = a}).reply.code, core::ReplyCode::kOk);
  const auto queued = h.commit(core::Acquire{.lock = "L", .session = b, .wait = true, .wait_ms = 500}, b, 1);
  ASSERT_EQ(queued.reply.code, core::ReplyCode::kQueued);
  EXPECT_EQ(h.node().next_timer_deadline(), h.clock().now() + milliseconds(500));
  h.clock().advance(milliseconds(499));
  h.fire_due_timers();
  EXPECT_TRUE(effects_of<core::WaitEnded>(h.effects()).empty());
  h.clock().advance(milliseconds(1));
  h.fire_due_timers();
  auto ended = effects_of<core::WaitEnded>(h.effects());
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].session, b);
  EXPECT_EQ(ended[0].seq, 1u);
  EXPECT_EQ(ended[0].reason, core::WaitEndReason::kTimedOut);
  EXPECT_TRUE(h.node().state().lock("L")->waiters.empty());
}

TEST(NodeTimers, GrantedWaitNeedsNoTimeout) {
  NodeHarness h;
  h.open();
  const core::SessionId a = h.open_session(60'000);
  const core::SessionId b = h.open_session(60'000);
  const auto held = h.commit(core::Acquire{.lock = "L", .session = a});
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = b, .wait = true, .wait_ms = 500}).reply.code,
            core::ReplyCode::kQueued);
  ASSERT_FALSE(h.commit(core::Release{"L", a, held.reply.token}).reply.is_error());
  ASSERT_EQ(effects_of<core::Granted>(h.effects()).size(), 1u);
  const int appends = h.control().append_count();
  h.clock().advance(milliseconds(500));
  h.fire_due_timers();
  EXPECT_EQ(h.control().append_count(), appends) << "proposed TimeoutWait for a granted wait";
}

TEST(NodeTimers, LockDelayEndsWithATickThatGrantsTheWaiter) {
  NodeHarness h;
  h.open();
  const core::SessionId a = h.open_session(1000);
  const core::SessionId b = h.open_session(60'000);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = a, .delay_ms = 300}).reply.code,
            core::ReplyCode::kOk);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = b, .wait = true}).reply.code,
            core::ReplyCode::kQueued);
  h.clock().advance(milliseconds(1000));
  h.fire_due_timers();  // a expires: lock lost, lock-delay starts
  ASSERT_EQ(effects_of<core::LockLost>(h.effects()).size(), 1u);
  EXPECT_TRUE(effects_of<core::Granted>(h.effects()).empty()) << "granted during the lock-delay";
  ASSERT_TRUE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(*h.node().next_timer_deadline(), h.clock().now() + milliseconds(300));
  h.clock().advance(milliseconds(299));
  h.fire_due_timers();
  EXPECT_TRUE(effects_of<core::Granted>(h.effects()).empty());
  h.clock().advance(milliseconds(1));
  h.fire_due_timers();
  auto granted = effects_of<core::Granted>(h.effects());
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].session, b);
}

}  // namespace
}  // namespace leasehold::node
