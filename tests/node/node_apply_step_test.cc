// Apply in steps (NodeOptions::apply_step): a durable batch is applied and
// answered in steps of bounded loop time, in log order, whole before the
// next batch; snapshots wait for a batch boundary and shutdown for the rest.
// A budget of 1 ns ends every step at its first check (kApplyStepCheck
// commands), so the steps are the same on any machine.
#include <gtest/gtest.h>

#include <vector>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using namespace std::chrono_literals;
using testing::NodeHarness;
using testing::open_session_command;

constexpr std::size_t kStep = 8;  // Node::Impl::kApplyStepCheck

NodeOptions step_options() {
  NodeOptions o;
  o.apply_step = 1ns;
  return o;
}

// Proposes `n` session opens; each reply's session id goes to `ids`, in the
// order the replies come.
void propose_opens(NodeHarness& h, int n, std::vector<core::SessionId>& ids) {
  for (int i = 0; i < n; ++i) {
    h.node().propose(open_session_command(), [&ids](const core::ApplyResult& r) {
      ASSERT_FALSE(r.reply.is_error()) << r.reply.error.message();
      ids.push_back(r.reply.session);
    });
  }
}

void expect_increasing(const std::vector<core::SessionId>& ids) {
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << "reply " << i << " out of order";
}

TEST(NodeApplyStep, ABatchIsAnsweredInStepsInLogOrder) {
  NodeHarness h(step_options());
  h.open();
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  // The whole batch is durable at once; the first step answers 8 of it.
  ASSERT_TRUE(h.loop().run_until([&] { return !ids.empty(); }));
  EXPECT_EQ(ids.size(), kStep);
  EXPECT_EQ(h.control().append_count(), 1);
  EXPECT_EQ(h.node().stats().batches_committed, 1u);
  EXPECT_EQ(h.node().stats().pending_proposals, 20 - kStep) << "committed, not yet applied: still pending";
  EXPECT_EQ(h.node().applied_index(), 0u) << "the entry counts as applied only once all of it is";
  ASSERT_TRUE(h.loop().run_until([&] { return ids.size() > kStep; }));
  EXPECT_EQ(ids.size(), 2 * kStep);
  ASSERT_TRUE(h.loop().run_until([&] { return ids.size() == 20; }));
  EXPECT_EQ(h.node().applied_index(), 1u);
  EXPECT_EQ(h.node().stats().pending_proposals, 0u);
  EXPECT_EQ(h.node().state().session_count(), 20u);
  expect_increasing(ids);
}

TEST(NodeApplyStep, ABatchCommittedWhileAnotherIsHalfAppliedWaitsItsTurn) {
  NodeHarness h(step_options());
  h.open();
  std::vector<core::SessionId> ids;
  h.control().set_hold(true);
  propose_opens(h, 10, ids);
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().held_count() == 1; }));
  propose_opens(h, 10, ids);  // queued behind the held append
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return ids.size() == 20; }));
  EXPECT_EQ(h.control().append_count(), 2);
  EXPECT_EQ(h.node().applied_index(), 2u);
  expect_increasing(ids);
}

TEST(NodeApplyStep, ASnapshotWaitsForTheBatchBoundary) {
  NodeOptions o = step_options();
  o.snapshot_every_commands = 4;
  NodeHarness h(o);
  h.open();
  h.control().set_hold_snapshots(true);
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  ASSERT_TRUE(h.loop().run_until([&] { return !ids.empty(); }));
  ASSERT_LT(ids.size(), 20u);
  ASSERT_TRUE(h.loop().run_until([&] { return ids.size() == 20; }));
  // The only snapshot is of the whole entry, after its last step.
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().held_snapshot_count() == 1; }));
  h.control().set_hold_snapshots(false);
  h.control().release_snapshots();
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 1; }));
  h.close();
  h.open();  // recovers from that snapshot: all 20 sessions, none twice
  EXPECT_EQ(h.node().state().session_count(), 20u);
}

TEST(NodeApplyStep, NoSnapshotStartsMidBatch) {
  NodeOptions o = step_options();
  o.snapshot_every_commands = 4;
  NodeHarness h(o);
  h.open();
  h.commit(core::OpenSession{10'000, "first"});  // entry 1: a snapshot could be labelled 1
  h.control().set_hold_snapshots(true);
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  // Step by step: while the entry is partly applied, no snapshot is taken.
  while (ids.size() < 20) {
    const std::size_t before = ids.size();
    ASSERT_TRUE(h.loop().run_until([&] { return ids.size() > before; }));
    if (ids.size() < 20) {
      EXPECT_EQ(h.control().held_snapshot_count(), 0u) << "at " << ids.size() << " of 20";
    }
  }
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().held_snapshot_count() == 1; }));
  h.control().set_hold_snapshots(false);
  h.control().release_snapshots();
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 1; }));
  h.close();
  h.open();
  EXPECT_EQ(h.node().state().session_count(), 21u);
}

TEST(NodeApplyStep, ShutdownAnswersTheRestFirst) {
  NodeHarness h(step_options());
  h.open();
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  ASSERT_TRUE(h.loop().run_until([&] { return !ids.empty(); }));
  ASSERT_LT(ids.size(), 20u);
  bool down = false;
  h.node().shutdown([&down] { down = true; });
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_EQ(h.node().state().session_count(), 20u);
}

TEST(NodeApplyStep, CommittedButUnappliedCommandsCountAgainstTheProposalLimit) {
  NodeOptions o = step_options();
  o.max_pending_proposals = 20;
  NodeHarness h(o);
  h.open();
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  ASSERT_TRUE(h.loop().run_until([&] { return !ids.empty(); }));
  ASSERT_EQ(ids.size(), kStep);
  // 12 committed and unapplied + 8 new = 20: the 9th new one is refused.
  propose_opens(h, static_cast<int>(kStep), ids);
  bool refused = false;
  h.node().propose(open_session_command(), [&refused](const core::ApplyResult& r) {
    refused = r.reply.is_error() && r.reply.error.code() == ErrorCode::kLimitExceeded;
  });
  ASSERT_TRUE(h.loop().run_until([&] { return refused && ids.size() == 28; }));
}

TEST(NodeApplyStep, OffByDefault) {
  NodeHarness h;  // NodeOptions{}: apply_step 0
  h.open();
  std::vector<core::SessionId> ids;
  propose_opens(h, 20, ids);
  ASSERT_TRUE(h.loop().run_until([&] { return !ids.empty(); }));
  EXPECT_EQ(ids.size(), 20u) << "one completion answers the whole batch";
}

}  // namespace
}  // namespace leasehold::node
