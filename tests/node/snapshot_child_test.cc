// Snapshots encoded in a forked child (node/snapshot_child.h,
// NodeOptions::snapshot_in_child): the child's bytes are the state at the
// fork, whatever the parent does meanwhile, and a node taking its snapshots
// that way restarts into the same state.
#include "node/snapshot_child.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <string>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

core::Command open_session_at(core::Revision at) {
  core::Command c;
  c.now = at;
  c.body = core::OpenSession{60'000, "owner-" + std::to_string(at), ""};
  return c;
}

TEST(SnapshotChild, EncodesTheStateAtTheFork) {
  core::StateMachine sm;
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(sm.apply(open_session_at(sm.revision())).reply.is_error());
  const std::string at_fork = sm.snapshot();
  Result<SnapshotChild> child = SnapshotChild::start(sm);
  ASSERT_TRUE(child.is_ok()) << child.status().to_string();
  // The parent goes on changing its state while the child encodes.
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(sm.apply(open_session_at(sm.revision())).reply.is_error());
  Result<std::string> bytes = child->finish();
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(*bytes, at_fork);
  EXPECT_NE(sm.snapshot(), at_fork);
}

TEST(SnapshotChild, AnUnfinishedChildIsKilledAndReaped) {
  core::StateMachine sm;
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(sm.apply(open_session_at(sm.revision())).reply.is_error());
  {
    Result<SnapshotChild> child = SnapshotChild::start(sm);
    ASSERT_TRUE(child.is_ok()) << child.status().to_string();
  }  // destroyed without finish(): SIGKILL + waitpid, no zombie left
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(SnapshotChild, NodeSnapshotsInAChildAndRestartsIntoTheSameState) {
  NodeOptions options;
  options.snapshot_every_commands = 10;
  options.snapshot_in_child = true;
  testing::NodeHarness h(options);
  h.open();
  for (int i = 0; i < 25; ++i) h.open_session(60'000);  // one command per batch
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved >= 2; }));
  const NodeStats before = h.node().stats();
  EXPECT_GE(before.log.snapshot, 10u);
  EXPECT_EQ(before.log.last, 25u);
  // Entries the snapshot covers are gone. On a slow machine every command can
  // be applied while the first snapshot is in flight; the second then covers
  // all 25 and none is left (first = 0).
  if (before.log.snapshot == before.log.last) {
    EXPECT_EQ(before.log.first, 0u);
  } else {
    EXPECT_EQ(before.log.first, before.log.snapshot + 1);
  }
  const std::string image = h.node().state().snapshot();
  h.close();
  h.open();
  const NodeStats after = h.node().stats();
  EXPECT_EQ(after.replayed_entries, 25u - before.log.snapshot);
  EXPECT_EQ(after.applied_index, 25u);
  EXPECT_EQ(h.node().state().snapshot(), image);
  EXPECT_EQ(after.timed_sessions, 25u);
}

}  // namespace
}  // namespace leasehold::node
