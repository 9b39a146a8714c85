// Restart: state recovered from snapshot + log tail, the log clock continues,
// every live session gets its full TTL from recovery, waits keep their
// remaining time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "log/rocksdb_log.h"
#include "node/revision_guard.h"
#include "testkit/eventually.h"
#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using std::chrono::milliseconds;
using testing::effects_of;
using testing::NodeHarness;

TEST(NodeRecovery, RestartRestoresStateAndGivesEachSessionItsFullTtl) {
  NodeHarness h;
  h.open();
  const core::SessionId s = h.open_session(5000);
  const auto grant = h.commit(core::Acquire{.lock = "L", .session = s});
  ASSERT_EQ(grant.reply.code, core::ReplyCode::kOk);
  h.clock().advance(milliseconds(4000));  // 1000 ms left before the crash
  h.open_session(5000);                   // stamps the log clock at +4000
  const core::LogMillis last_now = h.node().state().last_now();
  const core::Revision revision = h.node().state().revision();
  h.close();

  h.clock().advance(milliseconds(30'000));  // downtime
  h.open();
  EXPECT_EQ(h.node().state().revision(), revision);
  ASSERT_TRUE(h.node().state().lock("L").has_value());
  EXPECT_EQ(h.node().state().lock("L")->holders.at(0).token, grant.reply.token);
  EXPECT_EQ(h.node().log_now(), last_now) << "log clock must continue from the last stamp";
  EXPECT_EQ(*h.node().remaining_ms(s), 5000u) << "full TTL from recovery";
  h.clock().advance(milliseconds(4999));
  h.fire_due_timers();
  EXPECT_TRUE(h.node().state().session(s).has_value()) << "expired before TTL after recovery";
  h.clock().advance(milliseconds(1));
  h.fire_due_timers();
  EXPECT_FALSE(h.node().state().session(s).has_value());
  EXPECT_EQ(effects_of<core::LockLost>(h.effects()).size(), 1u);
  EXPECT_GT(h.node().state().last_now(), last_now);
}

// After an unclean lease-mode stop the start proposes a quarantining Reopen;
// in fsync mode it is applied only once durable. The quarantine is reported
// from the start all the same (INFO and /readyz read stats()), with the end
// its apply then sets.
TEST(NodeRecovery, TheQuarantineOfAStartIsReportedBeforeItsReopenIsApplied) {
  NodeOptions o;
  RevisionGuardOptions guard;
  guard.store = [](const log::RevisionRecord&) { return Status::ok(); };
  guard.loaded.state = log::LoadedRevisionRecord::State::kValid;
  guard.loaded.record = log::RevisionRecord{.reserved_through = 100, .max_ttl_ms = 4000, .lease = true};
  o.revision_guard = guard;
  NodeHarness h(o);
  h.control().set_hold(true);
  h.open();
  const core::LogMillis end = h.node().log_now() + with_drift_margin(4000);
  ASSERT_EQ(h.node().state().paused_until(), 0u) << "the Reopen is not applied yet";
  EXPECT_EQ(h.node().stats().quarantine_until, end);
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().state().paused_until() != 0; }));
  EXPECT_EQ(h.node().state().paused_until(), end) << "the apply set the end reported before it";
  EXPECT_EQ(h.node().stats().quarantine_until, end);
  h.clock().advance(milliseconds(with_drift_margin(4000)));
  EXPECT_EQ(h.node().stats().quarantine_until, 0u) << "over";
}

TEST(NodeRecovery, WaitDeadlineKeepsItsRemainingTimeOnTheLogClock) {
  NodeHarness h;
  h.open();
  const core::SessionId a = h.open_session(60'000);
  const core::SessionId b = h.open_session(60'000);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = a}).reply.code, core::ReplyCode::kOk);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = b, .wait = true, .wait_ms = 1000}).reply.code,
            core::ReplyCode::kQueued);
  h.clock().advance(milliseconds(600));
  h.open_session(60'000);  // last stamp: 600 ms after the wait was queued
  h.close();
  h.clock().advance(milliseconds(10'000));
  h.open();
  h.clock().advance(milliseconds(399));
  h.fire_due_timers();
  EXPECT_TRUE(effects_of<core::WaitEnded>(h.effects()).empty());
  h.clock().advance(milliseconds(1));
  h.fire_due_timers();
  ASSERT_EQ(effects_of<core::WaitEnded>(h.effects()).size(), 1u);
}

TEST(NodeRecovery, SnapshotEveryNCommandsThenRestartReplaysOnlyTheTail) {
  NodeOptions options;
  options.snapshot_every_commands = 10;
  NodeHarness h(options);
  h.open();
  for (int i = 0; i < 25; ++i) h.open_session(60'000);  // one command per batch
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 2; }));
  NodeStats before = h.node().stats();
  EXPECT_EQ(before.log.snapshot, 20u);
  EXPECT_EQ(before.log.first, 21u);
  EXPECT_EQ(before.log.last, 25u);
  const core::Revision revision = h.node().state().revision();
  const std::string image = h.node().state().snapshot();
  h.close();
  h.open();
  const NodeStats after = h.node().stats();
  EXPECT_EQ(after.replayed_entries, 5u);
  EXPECT_EQ(after.applied_index, 25u);
  EXPECT_EQ(h.node().state().revision(), revision);
  EXPECT_EQ(h.node().state().session_count(), 25u);
  EXPECT_EQ(h.node().state().snapshot(), image);
  EXPECT_EQ(after.timed_sessions, 25u);
}

TEST(NodeRecovery, ASnapshotThatCameDueWhileOneWasInFlightStartsWhenItFinishes) {
  NodeOptions options;
  options.snapshot_every_commands = 10;
  NodeHarness h(options);
  h.open();
  h.control().set_hold_snapshots(true);
  for (int i = 0; i < 25; ++i) h.open_session(60'000);  // one command per batch
  // The snapshot at index 10 is still being written; 15 more commands applied.
  ASSERT_EQ(h.control().held_snapshot_count(), 1u);
  h.control().set_hold_snapshots(false);
  h.control().release_snapshots();
  // No further command arrives: the due snapshot starts from the first one's end.
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 2; }));
  EXPECT_EQ(h.node().stats().log.snapshot, 25u);
}

TEST(NodeRecovery, ASnapshotEncodedInStepsIsItsIndexsStateThoughCommandsAppliedBetweenTheSteps) {
  NodeOptions options;
  options.snapshot_every_commands = 20;
  options.snapshot_step_sessions = 1;  // 20 steps, each a task of its own on the loop
  NodeHarness h(options);
  h.open();
  for (int i = 0; i < 20; ++i) h.open_session(60'000);  // sessions 1..20; the image of index 20 begins
  const std::string at_index_20 = h.node().state().snapshot();
  // Each command below is synced before the loop runs again, so it applies
  // a few steps later: while the image is still being encoded.
  const auto commit_between_steps = [&h](core::CommandBody body) {
    const log::LogIndex next = h.node().stats().log.last + 1;
    std::optional<core::ApplyResult> result;
    core::Command command;
    command.body = std::move(body);
    const int appends = h.control().append_count();
    h.node().propose(std::move(command), [&result](const core::ApplyResult& r) { result = r; });
    ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() > appends; }));
    ASSERT_TRUE(::leasehold::testing::eventually([&] { return h.node().stats().log.last >= next; },
                                                 std::chrono::seconds(10), std::chrono::milliseconds(1)));
    ASSERT_TRUE(h.loop().run_until([&] { return result.has_value(); }));
    ASSERT_FALSE(result->reply.is_error()) << result->reply.error.to_string();
    ASSERT_EQ(h.node().stats().snapshots_saved, 0u) << "the image was finished before the command applied";
  };
  commit_between_steps(core::SetSessionTtl{19, 30'000});  // not encoded yet: copied first
  commit_between_steps(core::CloseSession{20});           // likewise
  commit_between_steps(core::OpenSession{60'000, "late"});  // above the image's revision
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 1; }));
  EXPECT_EQ(h.node().stats().log.snapshot, 20u);
  const std::string image = h.node().state().snapshot();
  h.close();
  h.open();
  EXPECT_EQ(h.node().stats().replayed_entries, 3u);
  EXPECT_EQ(h.node().state().snapshot(), image);
  EXPECT_NE(image, at_index_20);
}

// The step budget (NodeOptions::snapshot_step) bounds the loop time of one
// task, not the sessions: with a budget no chunk can exhaust, one task
// encodes the whole image; with one every chunk exhausts (1 ns), each task
// encodes one chunk, as with no budget.
TEST(NodeRecovery, ASnapshotStepEncodesChunksUntilItsLoopTimeIsSpent) {
  const auto steps_for = [](std::chrono::nanoseconds budget) {
    NodeOptions options;
    options.snapshot_every_commands = 20;
    options.snapshot_step_sessions = 5;
    options.snapshot_step = budget;
    NodeHarness h(options);
    h.open();
    for (int i = 0; i < 20; ++i) h.open_session(60'000);
    EXPECT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 1; }));
    const std::uint64_t steps = h.node().stats().snapshot_steps;
    const std::string image = h.node().state().snapshot();
    h.close();
    h.open();
    EXPECT_EQ(h.node().state().snapshot(), image);  // the image restores into the same state
    return steps;
  };
  EXPECT_EQ(steps_for(std::chrono::hours(1)), 1u);
  // 20 sessions in chunks of 5: four chunks, and a fifth finds nothing left.
  EXPECT_EQ(steps_for(std::chrono::nanoseconds(1)), 5u);
  EXPECT_EQ(steps_for(std::chrono::nanoseconds(0)), 5u);
}

TEST(NodeRecovery, SnapshotByBytes) {
  NodeOptions options;
  options.snapshot_every_commands = 0;
  options.snapshot_every_bytes = 1000;
  NodeHarness h(options);
  h.open();
  for (int i = 0; i < 12; ++i) h.open_session(60'000, std::string(100, 'b'));
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved >= 1; }));
  EXPECT_GT(h.node().stats().log.snapshot, 0u);
}

TEST(NodeRecovery, CorruptSnapshotFailsOpenNamingTheFile) {
  NodeOptions options;
  options.snapshot_every_commands = 2;
  NodeHarness h(options);
  h.open();
  h.open_session(60'000);
  h.open_session(60'000);
  ASSERT_TRUE(h.loop().run_until([&] { return h.node().stats().snapshots_saved == 1; }));
  h.close();
  std::string path;
  for (const auto& e : std::filesystem::directory_iterator(h.dir() + "/log")) {
    if (e.path().filename().string().starts_with("snapshot-")) path = e.path().string();
  }
  ASSERT_FALSE(path.empty());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  auto log = log::open_rocksdb_log({.dir = h.dir() + "/log"});
  ASSERT_FALSE(log.is_ok());
  EXPECT_EQ(log.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(log.status().message().find(path), std::string::npos) << log.status().message();
}

TEST(NodeRecovery, UndecodableLogEntryFailsOpenNamingIt) {
  leasehold::testing::TempDir dir("node");
  {
    auto log = log::open_rocksdb_log({.dir = dir.path()});
    ASSERT_TRUE(log.is_ok());
    std::promise<Result<log::LogIndex>> appended;
    (*log)->append("not a batch", [&appended](Result<log::LogIndex> r) { appended.set_value(r); });
    ASSERT_TRUE(appended.get_future().get().is_ok());
  }
  auto log = log::open_rocksdb_log({.dir = dir.path()});
  ASSERT_TRUE(log.is_ok());
  ManualClock clock;
  testing::TestExecutor loop;
  auto node = Node::open({}, std::move(log.value()), clock, loop.executor());
  ASSERT_FALSE(node.is_ok());
  EXPECT_EQ(node.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(node.status().message().find("log entry 1"), std::string::npos) << node.status().message();
  EXPECT_NE(node.status().message().find(dir.path()), std::string::npos) << node.status().message();
}

}  // namespace
}  // namespace leasehold::node
