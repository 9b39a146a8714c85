// Lease mode's paced background writes (NodeOptions::lease_write_interval,
// node/lease_commit.cc): commands are answered at once, and appends start at
// most once per interval, each carrying everything applied meanwhile; a
// FENCE.PUT (answered only once durable) and shutdown do not wait for it.
#include <gtest/gtest.h>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using namespace std::chrono_literals;
using testing::NodeHarness;
using testing::open_session_command;

NodeOptions lease_options(std::chrono::microseconds interval) {
  NodeOptions o;
  o.acknowledge_before_durable = true;
  o.lease_write_interval = interval;
  RevisionGuardOptions guard;
  guard.store = [](const log::RevisionRecord&) { return Status::ok(); };
  guard.lease = true;
  o.revision_guard = guard;
  return o;
}

struct Counted {
  int replies = 0;
  Node::ProposeDone done() {
    return [this](const core::ApplyResult&) { ++replies; };
  }
};

// One command at an idle node: answered and written at once. Returns with
// that append completed.
void first_write(NodeHarness& h, Counted& c) {
  h.node().propose(open_session_command(), c.done());
  ASSERT_TRUE(h.loop().run_until([&] { return c.replies == 1 && h.node().stats().batches_committed == 1; }));
  ASSERT_EQ(h.control().append_count(), 1);
}

TEST(NodeLeasePacing, TheNextAppendWaitsForTheIntervalWhileRepliesDoNot) {
  NodeHarness h(lease_options(5ms));
  h.open();
  Counted c;
  first_write(h, c);
  const auto started = h.clock().now();  // the first append's start (the clock did not move)
  for (int i = 0; i < 10; ++i) h.node().propose(open_session_command(), c.done());
  ASSERT_TRUE(h.loop().run_until([&] { return c.replies == 11; })) << "lease mode answers before the write";
  h.node().run_due_timers();  // not due yet
  h.loop().run_for(30ms);
  EXPECT_EQ(h.control().append_count(), 1) << "the second append waits for the interval";
  ASSERT_TRUE(h.node().next_timer_deadline().has_value());
  EXPECT_EQ(*h.node().next_timer_deadline(), started + 5ms) << "the pace is a timer deadline";
  h.clock().advance(5ms);
  h.node().run_due_timers();
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().batches_committed == 2; }));
  EXPECT_EQ(h.control().append_count(), 2) << "the 10 commands went out in one append";
  EXPECT_EQ(h.node().stats().commands_committed, 11u);
  EXPECT_EQ(h.node().stats().pending_proposals, 0u);
}

TEST(NodeLeasePacing, AFencePutIsWrittenWithoutWaitingAndAnsweredOnceDurable) {
  NodeHarness h(lease_options(5ms));
  h.open();
  Counted c;
  first_write(h, c);
  h.node().propose(open_session_command(), c.done());  // paced
  ASSERT_TRUE(h.loop().run_until([&] { return c.replies == 2; }));
  h.loop().run_for(20ms);
  ASSERT_EQ(h.control().append_count(), 1);
  core::Command put;
  put.body = core::FencePut{"k", "v", "no-such-lock", 1};
  bool put_answered = false;
  h.control().set_hold(true);
  h.node().propose(put, [&](const core::ApplyResult&) { put_answered = true; });
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() == 2; }))
      << "a chunk holding a FENCE.PUT reply is written at once (the clock did not move)";
  h.loop().run_for(20ms);
  EXPECT_FALSE(put_answered) << "a FENCE.PUT is answered only once durable";
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return put_answered; }));
  EXPECT_EQ(h.node().stats().commands_committed, 3u);
}

// FENCE.GET shows a value only once its FENCE.PUT is durable: found by the
// torture suite (seed 920019, disk full), where a reader saw a put that the
// full disk then lost, and a later read showed the value before it.
TEST(NodeLeasePacing, AFencedValueIsShownOnlyOnceItsPutIsDurable) {
  NodeHarness h(lease_options(5ms));
  h.open();
  core::SessionId session = 0;
  h.node().propose(open_session_command(), [&](const core::ApplyResult& r) { session = r.reply.session; });
  ASSERT_TRUE(h.loop().run_until([&] { return session != 0; }));
  core::Command acquire;
  acquire.body = core::Acquire{"L", session};
  core::Token token = 0;
  h.node().propose(acquire, [&](const core::ApplyResult& r) { token = r.reply.token; });
  ASSERT_TRUE(h.loop().run_until([&] { return token != 0; }));
  auto put = [&](std::string value, bool* answered) {
    core::Command c;
    c.body = core::FencePut{"k", std::move(value), "L", token};
    h.node().propose(c, [answered](const core::ApplyResult& r) { *answered = !r.reply.is_error(); });
  };
  bool first = false;
  put("v1", &first);
  ASSERT_TRUE(h.loop().run_until([&] { return first; }));
  ASSERT_TRUE(h.node().fence_get("k").has_value());
  EXPECT_EQ(h.node().fence_get("k")->value, "v1");

  h.control().set_hold(true);
  bool second = false;
  put("v2", &second);
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().state().fence_get("k")->value == "v2"; }))
      << "lease mode applies the put before its write";
  h.loop().run_for(20ms);
  ASSERT_FALSE(second);
  EXPECT_EQ(h.node().fence_get("k")->value, "v1") << "a reader sees only the durable value";
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return second; }));
  EXPECT_EQ(h.node().fence_get("k")->value, "v2");

  // A put whose write fails is never shown: the node stops writing, and the
  // next start would not have it.
  {
    std::lock_guard lock(h.control().mu);
    h.control().fail_next = Status(ErrorCode::kIoError, "disk full");
  }
  bool third = false;
  put("v3", &third);
  h.loop().run_for(50ms);
  EXPECT_FALSE(third);
  EXPECT_EQ(h.node().fence_get("k")->value, "v2");
  // A key with no durable value at all reads as nil.
  EXPECT_FALSE(h.node().fence_get("other").has_value());
}

TEST(NodeLeasePacing, ShutdownWritesAPacedChunkAtOnce) {
  NodeHarness h(lease_options(5ms));
  h.open();
  Counted c;
  first_write(h, c);
  for (int i = 0; i < 3; ++i) h.node().propose(open_session_command(), c.done());
  ASSERT_TRUE(h.loop().run_until([&] { return c.replies == 4; }));
  h.loop().run_for(20ms);
  ASSERT_EQ(h.control().append_count(), 1);
  bool down = false;
  h.node().shutdown([&down] { down = true; });
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  EXPECT_EQ(h.control().append_count(), 2);
  EXPECT_EQ(h.node().stats().commands_committed, 4u);
}

// A shutdown with proposals still queued (not yet applied by the loop's
// round) applies, answers and writes them through the lease path. It used to
// write them with the fsync path's append, whose completion lease mode
// accounted as a write of no chunk: a crash (SIGTERM under load, 1 in 5),
// and the next start quarantined after what was a clean shutdown.
TEST(NodeLeasePacing, ShutdownWithQueuedProposalsWritesThemThroughTheLeasePath) {
  NodeHarness h(lease_options(5ms));
  h.open();
  Counted c;
  first_write(h, c);
  for (int i = 0; i < 3; ++i) h.node().propose(open_session_command(), c.done());
  bool down = false;
  h.node().shutdown([&down] { down = true; });  // before the loop ran the queued round
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  EXPECT_EQ(c.replies, 4);
  EXPECT_EQ(h.node().stats().commands_committed, 4u);
  EXPECT_EQ(h.node().stats().pending_proposals, 0u);
}

// A snapshot is labelled with the last written log index, so it may only be
// taken while the state equals the log: not while a chunk, applied already,
// is being written. One that came due while another snapshot was saved
// waits for that write.
TEST(NodeLeasePacing, NoSnapshotWhileAnAppliedChunkIsBeingWritten) {
  NodeOptions o = lease_options(0us);
  o.snapshot_every_commands = 1;
  NodeHarness h(o);
  h.open();
  h.control().set_hold_snapshots(true);
  Counted c;
  first_write(h, c);
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().held_snapshot_count() == 1; }))
      << "the first snapshot (index 1) is due and held";
  h.control().set_hold(true);
  h.node().propose(open_session_command(), c.done());
  ASSERT_TRUE(h.loop().run_until([&] { return c.replies == 2 && h.control().held_count() == 1; }))
      << "applied, answered, and its write held";
  h.control().set_hold_snapshots(false);
  h.control().release_snapshots();  // the first snapshot is saved; the next is due
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved >= 1; })) << "the first snapshot";
  h.loop().run_for(50ms);  // a window in which the due snapshot must not start
  EXPECT_EQ(h.node().stats().snapshots_saved, 1u);
  EXPECT_EQ(h.control().held_snapshot_count(), 0u);
  const std::uint64_t saved = h.node().stats().snapshots_saved;
  h.control().set_hold(false);
  h.control().release();  // the chunk is written: now the state equals the log
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == saved + 1; }))
      << "the due snapshot is taken once the write completed";
}

TEST(NodeLeasePacing, ZeroIntervalWritesBackToBack) {
  NodeHarness h(lease_options(0us));
  h.open();
  Counted c;
  first_write(h, c);
  h.node().propose(open_session_command(), c.done());
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().batches_committed == 2; }));
  EXPECT_EQ(h.control().append_count(), 2);
}

}  // namespace
}  // namespace leasehold::node
