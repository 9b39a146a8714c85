// Commit linger (NodeOptions::commit_linger): after a slow append that
// answered several clients, the next append waits for them (or the bound)
// so that a closed-loop load forms one full batch instead of two halves.
#include <gtest/gtest.h>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using namespace std::chrono_literals;
using testing::NodeHarness;
using testing::open_session_command;

NodeOptions linger_options() {
  NodeOptions o;
  o.commit_linger = 200us;
  return o;
}

// Commits a first batch of `first` proposals whose append takes `latency`
// (on the manual clock) while `queued` more arrive. Returns with the first
// batch answered; `replies` counts every reply.
void first_slow_batch(NodeHarness& h, int first, int queued, std::chrono::milliseconds latency, int& replies) {
  h.control().set_hold(true);
  const auto count = [&replies](const core::ApplyResult& r) { replies += r.reply.is_error() ? 0 : 1; };
  for (int i = 0; i < first; ++i) h.node().propose(open_session_command(), count);
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() == 1; }));
  for (int i = 0; i < queued; ++i) h.node().propose(open_session_command(), count);
  h.clock().advance(latency);
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return replies == first; }));
}

TEST(NodeCommitLinger, WaitsForTheAnsweredClientsThenCommitsOneFullBatch) {
  NodeHarness h(linger_options());
  h.open();
  int replies = 0;
  first_slow_batch(h, 8, 2, 1ms, replies);
  h.loop().run_for(50ms);
  EXPECT_EQ(h.control().append_count(), 1) << "the next append should wait for the 8 answered clients";
  ASSERT_TRUE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(*h.node().next_timer_deadline(), h.clock().now() + 200us) << "the linger's bound is a timer deadline";
  // The answered clients come back: at 2 + 8 queued the append starts at once.
  const auto count = [&replies](const core::ApplyResult& r) { replies += r.reply.is_error() ? 0 : 1; };
  for (int i = 0; i < 7; ++i) h.node().propose(open_session_command(), count);
  h.loop().run_for(20ms);
  EXPECT_EQ(h.control().append_count(), 1);
  h.node().propose(open_session_command(), count);
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 18; }));
  EXPECT_EQ(h.control().append_count(), 2) << "2 queued + 8 returning clients: one batch of 10";
  EXPECT_EQ(h.node().stats().batches_committed, 2u);
}

TEST(NodeCommitLinger, EndsAtItsBoundWithWhatIsQueued) {
  NodeHarness h(linger_options());
  h.open();
  int replies = 0;
  first_slow_batch(h, 8, 2, 1ms, replies);
  const auto count = [&replies](const core::ApplyResult& r) { replies += r.reply.is_error() ? 0 : 1; };
  for (int i = 0; i < 3; ++i) h.node().propose(open_session_command(), count);
  h.node().run_due_timers();  // not due yet
  h.loop().run_for(20ms);
  EXPECT_EQ(h.control().append_count(), 1);
  h.clock().advance(1ms);
  h.node().run_due_timers();
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 13; }));
  EXPECT_EQ(h.control().append_count(), 2) << "the 5 queued went out together at the bound";
}

TEST(NodeCommitLinger, NoLingerAfterAFastAppendOrASmallBatch) {
  NodeHarness h(linger_options());
  h.open();
  int replies = 0;
  // Fast append (latency 0 < 3 x 200 us): the queued 2 go out at once.
  first_slow_batch(h, 8, 2, 0ms, replies);
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 10; }));
  EXPECT_EQ(h.control().append_count(), 2);
  // Slow append but only 2 answered (a hand-off chain): no linger either.
  NodeHarness h2(linger_options());
  h2.open();
  int replies2 = 0;
  first_slow_batch(h2, 2, 1, 1ms, replies2);
  ASSERT_TRUE(h2.loop().run_until([&] { return replies2 == 3; }));
  EXPECT_EQ(h2.control().append_count(), 2);
}

TEST(NodeCommitLinger, OffByDefault) {
  NodeHarness h;  // NodeOptions{}: commit_linger 0
  h.open();
  int replies = 0;
  first_slow_batch(h, 8, 2, 1ms, replies);
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 10; }));
  EXPECT_EQ(h.control().append_count(), 2);
}

TEST(NodeCommitLinger, ShutdownDuringALingerCommitsWhatIsQueued) {
  NodeHarness h(linger_options());
  h.open();
  int replies = 0;
  first_slow_batch(h, 8, 2, 1ms, replies);
  h.loop().run_for(20ms);
  ASSERT_EQ(h.control().append_count(), 1);
  bool down = false;
  h.node().shutdown([&down] { down = true; });
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  EXPECT_EQ(replies, 10);
  EXPECT_EQ(h.node().state().session_count(), 10u);
}

}  // namespace
}  // namespace leasehold::node
