// Node::reset_to_snapshot (node/node.h), the state reset behind a standby's
// catch-up (cluster/cluster_member.h): a cluster-mode node over the real
// RocksDB log, driven by the node tests' harness (manual clock, test loop).
// The snapshot comes from a second, embedded node that committed commands.
#include <gtest/gtest.h>

#include "core/command_codec.h"
#include "tests/node/node_test_util.h"

namespace leasehold::node::testing {
namespace {

NodeOptions cluster_options() {
  NodeOptions o;
  o.cluster_mode = true;
  return o;
}

// An embedded node that committed a session and a lock: its snapshot.
struct Source {
  NodeHarness harness;
  core::SessionId session = 0;
  Source() {
    harness.open();
    session = harness.open_session(60'000);
    core::ApplyResult r = harness.commit(core::Acquire{"a", session});
    EXPECT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  }
  log::LogIndex index() { return harness.node().stats().applied_index; }
  std::string snapshot() { return harness.node().state().snapshot(); }
};

std::string one_command_batch(core::CommandBody body, core::LogMillis now) {
  core::Command c;
  c.now = now;
  c.body = std::move(body);
  return core::encode_batch({c});
}

TEST(NodeResetTest, StandbyResetsToASnapshotThenFollowsTheEntriesAfterIt) {
  Source source;
  NodeHarness standby(cluster_options());
  standby.open();
  ASSERT_EQ(standby.node().role(), Role::kStandby);
  // Some unrelated state first: the reset replaces all of it.
  ASSERT_TRUE(standby.node().follow(1, one_command_batch(core::OpenSession{1000, "old"}, 5)));
  ASSERT_EQ(standby.node().state().session_count(), 1u);

  ASSERT_TRUE(standby.node().reset_to_snapshot(source.index(), source.snapshot()));
  EXPECT_EQ(standby.node().role(), Role::kStandby);
  EXPECT_EQ(standby.node().stats().applied_index, source.index());
  EXPECT_EQ(standby.node().stats().catch_up_recoveries, 1u);
  EXPECT_EQ(standby.node().state().snapshot(), source.snapshot());
  EXPECT_EQ(standby.node().state().revision(), source.harness.node().state().revision());
  EXPECT_FALSE(standby.node().next_timer_deadline().has_value()) << "a standby arms no timer";

  // The entries after the snapshot follow on; a gap is still refused.
  const log::LogIndex next = source.index() + 1;
  const std::string entry = one_command_batch(core::OpenSession{1000, "new"}, 10);
  const Status gap = standby.node().follow(next + 1, entry);
  EXPECT_EQ(gap.code(), ErrorCode::kInternal) << gap.to_string();
  ASSERT_TRUE(standby.node().follow(next, entry));
  EXPECT_EQ(standby.node().stats().applied_index, next);
  EXPECT_EQ(standby.node().state().session_count(), 2u);

  // Back to the empty initial state (no snapshot in etcd yet).
  ASSERT_TRUE(standby.node().reset_to_snapshot(0, ""));
  EXPECT_EQ(standby.node().stats().applied_index, 0u);
  EXPECT_EQ(standby.node().state().session_count(), 0u);
  EXPECT_EQ(standby.node().stats().catch_up_recoveries, 2u);
}

TEST(NodeResetTest, RefusesOnAPrimaryAndOnACorruptSnapshotWithoutChangingState) {
  Source source;
  // Entry 1 is in this node's own log (as a shared etcd log would hold it),
  // so that its own append below lands at entry 2.
  NodeHarness node;
  node.open();
  node.commit(core::OpenSession{1000, "x"});
  node.close();
  node.options() = cluster_options();
  node.open();
  ASSERT_EQ(node.node().stats().applied_index, 1u);
  const std::string before = node.node().state().snapshot();

  const Status corrupt = node.node().reset_to_snapshot(7, "not a snapshot");
  EXPECT_EQ(corrupt.code(), ErrorCode::kCorruption) << corrupt.to_string();
  EXPECT_EQ(node.node().state().snapshot(), before);
  EXPECT_EQ(node.node().stats().applied_index, 1u);
  EXPECT_EQ(node.node().stats().catch_up_recoveries, 0u);

  node.node().promote();
  ASSERT_EQ(node.node().role(), Role::kPrimary);
  const Status refused = node.node().reset_to_snapshot(source.index(), source.snapshot());
  EXPECT_EQ(refused.code(), ErrorCode::kConflict) << refused.to_string();
  EXPECT_EQ(node.node().state().snapshot(), before);
  EXPECT_EQ(node.node().role(), Role::kPrimary);
  EXPECT_EQ(node.node().stats().catch_up_recoveries, 0u);

  // Stepped down with its own append still in flight: not yet.
  node.control().set_hold(true);
  bool answered = false;
  node.node().propose(core::Command{0, 0, 0, core::OpenSession{1000, "late"}},
                      [&answered](const core::ApplyResult&) { answered = true; });
  ASSERT_TRUE(node.loop().run_until([&] { return node.control().held_count() == 1; }));
  node.node().step_down(Status(ErrorCode::kUnavailable, "test"));
  const Status busy = node.node().reset_to_snapshot(source.index(), source.snapshot());
  EXPECT_EQ(busy.code(), ErrorCode::kUnavailable) << busy.to_string();
  node.control().set_hold(false);
  node.control().release();
  ASSERT_TRUE(node.loop().run_until([&] { return answered; }));
  ASSERT_TRUE(node.node().reset_to_snapshot(source.index(), source.snapshot()));
  EXPECT_EQ(node.node().state().snapshot(), source.snapshot());
  EXPECT_EQ(node.node().role(), Role::kStandby);
}

// Regression (found by the torture suite, cluster-1etcd seed 60004): a
// primary deposed while its append was in flight (the etcd log answers
// kConflict "holds no election key") answered its clients -CONFLICT, which
// means a lock-state conflict ("already holding"); it must be -UNAVAILABLE.
TEST(NodeResetTest, ADeposedPrimaryFailsItsInFlightBatchAsUnavailable) {
  NodeHarness node(cluster_options());
  node.open();
  node.node().promote();
  ASSERT_EQ(node.node().role(), Role::kPrimary);
  {
    std::lock_guard lock(node.control().mu);
    node.control().fail_next = Status(ErrorCode::kConflict, "not the primary: this node holds no election key");
  }
  const core::ApplyResult r = node.commit(core::OpenSession{10'000, "x"});
  ASSERT_TRUE(r.reply.is_error());
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kUnavailable) << r.reply.error.to_string();
  EXPECT_NE(r.reply.error.message().find("deposed"), std::string::npos) << r.reply.error.to_string();
  EXPECT_EQ(node.node().role(), Role::kStandby);
  EXPECT_EQ(node.node().state().session_count(), 0u) << "a failed batch must not be applied";
}

}  // namespace
}  // namespace leasehold::node::testing
