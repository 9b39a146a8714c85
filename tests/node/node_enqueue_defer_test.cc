// Deferred enqueues (NodeOptions::enqueue_defer): a blocking acquire that
// must queue does not start an append of its own; it rides with the next
// append (the release that frees the lock) or starts one at its bound.
#include <gtest/gtest.h>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using namespace std::chrono_literals;
using testing::effects_of;
using testing::NodeHarness;

NodeOptions defer_options() {
  NodeOptions o;
  o.enqueue_defer = 5ms;
  return o;
}

core::Command acquire_cmd(core::SessionId session, std::uint64_t wait_ms = 0, bool wait = true) {
  core::Command c;
  c.body = core::Acquire{"L", session, core::LockMode::kExclusive, 1, wait, wait_ms, 0};
  return c;
}

core::Command release_cmd(core::SessionId session, core::Token token) {
  core::Command c;
  c.body = core::Release{"L", session, token, false};
  return c;
}

struct Held {
  core::SessionId holder = 0;
  core::SessionId waiter = 0;
  core::Token token = 0;
};

// Two sessions; the first holds "L".
Held hold_lock(NodeHarness& h) {
  Held held;
  held.holder = h.open_session(60'000, "holder");
  held.waiter = h.open_session(60'000, "waiter");
  const core::ApplyResult r = h.commit(core::Acquire{"L", held.holder, core::LockMode::kExclusive, 1, false, 0, 0});
  EXPECT_EQ(r.reply.code, core::ReplyCode::kOk);
  held.token = r.reply.token;
  return held;
}

// Proposes `session`'s blocking acquire of "L"; its reply lands in `out`.
void propose_wait(NodeHarness& h, core::SessionId session, std::optional<core::ApplyResult>& out) {
  h.node().propose(acquire_cmd(session), [&out](const core::ApplyResult& r) { out = r; });
}

// A node with the deferral on, "L" held by `held.holder`; `appends` counts
// the appends made so far.
class NodeEnqueueDefer : public ::testing::Test {
 protected:
  void SetUp() override {
    h.open();
    held = hold_lock(h);
    appends = h.control().append_count();
  }
  NodeHarness h{defer_options()};
  Held held;
  int appends = 0;
};

TEST_F(NodeEnqueueDefer, AQueuedAcquireRidesWithTheReleaseThatGrantsIt) {
  std::optional<core::ApplyResult> queued;
  propose_wait(h, held.waiter, queued);
  h.loop().run_for(20ms);
  EXPECT_EQ(h.control().append_count(), appends) << "the enqueue alone must not start an append";
  EXPECT_FALSE(queued.has_value());
  ASSERT_TRUE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(*h.node().next_timer_deadline(), h.clock().now() + 5ms) << "the bound is a timer deadline";

  h.effects().clear();
  std::optional<core::ApplyResult> released;
  h.node().propose(release_cmd(held.holder, held.token), [&](const core::ApplyResult& r) { released = r; });
  ASSERT_TRUE(h.loop().run_until([&] { return released.has_value() && queued.has_value(); }));
  EXPECT_EQ(h.control().append_count(), appends + 1) << "enqueue and release: one append";
  EXPECT_EQ(queued->reply.code, core::ReplyCode::kQueued) << "order kept: the enqueue applies first";
  EXPECT_EQ(released->reply.code, core::ReplyCode::kOk);
  const auto grants = effects_of<core::Granted>(h.effects());
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].session, held.waiter);
  EXPECT_GT(grants[0].token, held.token);
  EXPECT_FALSE(h.node().next_timer_deadline().has_value() &&
               *h.node().next_timer_deadline() <= h.clock().now() + 5ms)
      << "no deferral left pending";
}

TEST_F(NodeEnqueueDefer, TheBoundStartsTheAppend) {
  std::optional<core::ApplyResult> queued;
  propose_wait(h, held.waiter, queued);
  h.clock().advance(4ms);
  h.node().run_due_timers();
  h.loop().run_for(20ms);
  EXPECT_EQ(h.control().append_count(), appends) << "before the bound";
  h.clock().advance(1ms);
  h.node().run_due_timers();
  ASSERT_TRUE(h.loop().run_until([&] { return queued.has_value(); }));
  EXPECT_EQ(queued->reply.code, core::ReplyCode::kQueued);
  EXPECT_EQ(h.control().append_count(), appends + 1);
  const auto info = h.node().state().lock("L");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->waiters.size(), 1u);
  EXPECT_EQ(info->waiters[0].session, held.waiter);
}

TEST_F(NodeEnqueueDefer, AShortWaitShortensTheBound) {
  h.node().propose(acquire_cmd(held.waiter, /*wait_ms=*/2), [](const core::ApplyResult&) {});
  ASSERT_TRUE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(*h.node().next_timer_deadline(), h.clock().now() + 2ms);
}

TEST_F(NodeEnqueueDefer, GrantableOrNonBlockingAcquiresAreNotDeferred) {
  // Without WAIT the answer (nil) is due now.
  std::optional<core::ApplyResult> refused;
  h.node().propose(acquire_cmd(held.waiter, 0, /*wait=*/false), [&](const core::ApplyResult& r) { refused = r; });
  ASSERT_TRUE(h.loop().run_until([&] { return refused.has_value(); }));
  EXPECT_EQ(refused->reply.code, core::ReplyCode::kError);
  // A free lock is granted at once.
  core::Command other = acquire_cmd(held.waiter);
  std::get<core::Acquire>(other.body).lock = "free";
  std::optional<core::ApplyResult> granted;
  h.node().propose(other, [&](const core::ApplyResult& r) { granted = r; });
  ASSERT_TRUE(h.loop().run_until([&] { return granted.has_value(); }));
  EXPECT_EQ(granted->reply.code, core::ReplyCode::kOk);
}

TEST_F(NodeEnqueueDefer, AnAppendInFlightDoesNotCarryOnlyDeferredEnqueues) {
  const core::SessionId third = h.open_session(60'000, "third");
  appends = h.control().append_count();  // after opening `third`
  // An unrelated write is in flight when the enqueue arrives.
  h.control().set_hold(true);
  std::optional<core::ApplyResult> opened;
  core::Command open;
  open.body = core::OpenSession{60'000, "other"};
  h.node().propose(open, [&](const core::ApplyResult& r) { opened = r; });
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() == appends + 1; }));
  std::optional<core::ApplyResult> queued;
  propose_wait(h, third, queued);
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return opened.has_value(); }));
  h.loop().run_for(20ms);
  EXPECT_EQ(h.control().append_count(), appends + 1) << "the enqueue waits for company, not for the disk";
  // The release comes: one append carries both, and the release grants `third`.
  h.effects().clear();
  std::optional<core::ApplyResult> released;
  h.node().propose(release_cmd(held.holder, held.token), [&](const core::ApplyResult& r) { released = r; });
  ASSERT_TRUE(h.loop().run_until([&] { return released.has_value() && queued.has_value(); }));
  EXPECT_EQ(h.control().append_count(), appends + 2);
  const auto grants = effects_of<core::Granted>(h.effects());
  ASSERT_EQ(grants.size(), 1u);
  EXPECT_EQ(grants[0].session, third);
}

TEST_F(NodeEnqueueDefer, ShutdownCommitsADeferredEnqueue) {
  std::optional<core::ApplyResult> queued;
  propose_wait(h, held.waiter, queued);
  bool down = false;
  h.node().shutdown([&] { down = true; });
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->reply.code, core::ReplyCode::kQueued);
  h.close();
  h.open();
  const auto info = h.node().state().lock("L");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->waiters.size(), 1u) << "the enqueue was written before the clean stop";
}

TEST(NodeEnqueueDeferOff, EveryEnqueueIsWrittenAtOnce) {
  NodeHarness h;  // enqueue_defer 0
  h.open();
  const Held held = hold_lock(h);
  std::optional<core::ApplyResult> queued;
  propose_wait(h, held.waiter, queued);
  ASSERT_TRUE(h.loop().run_until([&] { return queued.has_value(); }));
  EXPECT_EQ(queued->reply.code, core::ReplyCode::kQueued);
}

}  // namespace
}  // namespace leasehold::node
