// Group commit, durability before replies, disk errors, shutdown.
#include <gtest/gtest.h>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

using testing::NodeHarness;
using testing::open_session_command;

TEST(NodeGroupCommit, ProposalsArrivingDuringAnAppendFormOneBatch) {
  NodeHarness h;
  h.open();
  h.control().set_hold(true);
  std::vector<core::ApplyResult> replies;
  const auto record = [&replies](const core::ApplyResult& r) { replies.push_back(r); };
  h.node().propose(open_session_command(), record);  // schedules append #1 (held)
  // The start is posted behind the loop's current work (proposals read in
  // the same loop iteration share a batch); it runs once the loop drains.
  ASSERT_TRUE(h.loop().run_until([&] { return h.control().append_count() == 1; }));
  for (int i = 0; i < 99; ++i) h.node().propose(open_session_command(), record);
  EXPECT_EQ(h.control().append_count(), 1) << "only one append may be in flight";
  EXPECT_EQ(h.node().stats().pending_proposals, 100u);
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return replies.size() == 100; }));
  EXPECT_EQ(h.control().append_count(), 2) << "99 proposals should have formed one batch";
  const NodeStats s = h.node().stats();
  EXPECT_EQ(s.batches_committed, 2u);
  EXPECT_EQ(s.commands_committed, 100u);
  EXPECT_DOUBLE_EQ(s.average_batch_commands, 50.0);
  EXPECT_EQ(s.pending_proposals, 0u);
  EXPECT_EQ(s.log.last, 2u);
  EXPECT_EQ(s.applied_index, 2u);
  EXPECT_EQ(h.node().state().session_count(), 100u);
  // Replies come in proposal order with increasing session ids.
  for (std::size_t i = 1; i < replies.size(); ++i) {
    EXPECT_GT(replies[i].reply.session, replies[i - 1].reply.session);
  }
}

TEST(NodeGroupCommit, BatchSizeIsCappedByCount) {
  NodeOptions options;
  options.max_batch_commands = 10;
  NodeHarness h(options);
  h.open();
  h.control().set_hold(true);
  int replies = 0;
  for (int i = 0; i < 36; ++i) h.node().propose(open_session_command(), [&replies](const core::ApplyResult&) { ++replies; });
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 36; }));
  // All 36 were proposed before the loop ran the scheduled start: 10 + 10 + 10 + 6.
  EXPECT_EQ(h.control().append_count(), 4);
}

TEST(NodeGroupCommit, BatchSizeIsCappedByBytes) {
  NodeOptions options;
  options.max_batch_bytes = 200;
  NodeHarness h(options);
  h.open();
  h.control().set_hold(true);
  int replies = 0;
  core::Command big;
  big.body = core::OpenSession{10'000, std::string(90, 'o')};  // ~100 encoded bytes
  for (int i = 0; i < 7; ++i) h.node().propose(big, [&replies](const core::ApplyResult&) { ++replies; });
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return replies == 7; }));
  EXPECT_EQ(h.control().append_count(), 4);  // 1, then 2 + 2 + 2
  // One command larger than a whole batch is refused.
  core::Command huge;
  huge.body = core::OpenSession{10'000, std::string(300, 'o')};
  std::optional<core::ApplyResult> r;
  h.node().propose(huge, [&r](const core::ApplyResult& x) { r = x; });
  ASSERT_TRUE(h.loop().run_until([&] { return r.has_value(); }));
  EXPECT_EQ(r->reply.error.code(), ErrorCode::kLimitExceeded);
}

TEST(NodeGroupCommit, ReplyAndStateChangeOnlyAfterTheAppendIsDurable) {
  NodeHarness h;
  h.open();
  h.control().set_hold(true);
  std::optional<core::ApplyResult> reply;
  h.node().propose(open_session_command(), [&reply](const core::ApplyResult& r) { reply = r; });
  h.loop().run_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(reply.has_value()) << "replied before the log synced";
  EXPECT_EQ(h.node().state().session_count(), 0u) << "applied before the log synced";
  EXPECT_EQ(h.node().stats().log.last, 0u);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return reply.has_value(); }));
  EXPECT_EQ(h.node().stats().log.last, 1u);
  EXPECT_EQ(h.node().state().session_count(), 1u);
  EXPECT_NE(reply->reply.session, 0u);
}

TEST(NodeGroupCommit, ReplyCallbackAndEffectsComeInCommandOrder) {
  NodeHarness h;
  h.open();
  const core::SessionId a = h.open_session(10'000);
  ASSERT_EQ(h.commit(core::Acquire{.lock = "L", .session = a}).reply.code, core::ReplyCode::kOk);
  const core::SessionId b = h.open_session(10'000);
  h.effects().clear();
  // Queued wait and the release that grants it, in one batch.
  h.control().set_hold(true);
  h.node().propose(open_session_command(), nullptr);  // in flight
  std::vector<std::string> order;
  core::Command wait;
  wait.body = core::Acquire{.lock = "L", .session = b, .wait = true};
  h.node().propose(wait, [&](const core::ApplyResult& r) {
    order.push_back(r.reply.code == core::ReplyCode::kQueued ? "queued" : "other");
  });
  core::Command release;
  const core::Token token = h.node().state().lock("L")->holders.at(0).token;
  release.body = core::Release{"L", a, token};
  h.node().propose(release, [&](const core::ApplyResult& r) {
    order.push_back(r.reply.is_error() ? "release-failed" : "released");
    EXPECT_TRUE(testing::effects_of<core::Granted>(h.effects()).empty()) << "effects before reply";
  });
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return order.size() == 2; }));
  EXPECT_EQ(order, (std::vector<std::string>{"queued", "released"}));
  auto granted = testing::effects_of<core::Granted>(h.effects());
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].session, b);
}

TEST(NodeGroupCommit, StampsAreMonotonicLogClockValues) {
  NodeHarness h;
  h.open();
  const core::LogMillis start = h.node().log_now();
  h.open_session(10'000);
  h.clock().advance(std::chrono::milliseconds(250));
  h.open_session(10'000);
  EXPECT_EQ(h.node().state().last_now(), start + 250);
  EXPECT_EQ(h.node().log_now(), start + 250);
}

TEST(NodeGroupCommit, DiskErrorFailsTheBatchAndStopsWrites) {
  NodeHarness h;
  h.open();
  h.open_session(10'000);
  {
    std::lock_guard lock(h.control().mu);
    h.control().fail_next = Status(ErrorCode::kIoError, "injected: fsync failed");
  }
  const core::ApplyResult r = h.commit(core::OpenSession{10'000, "x"});
  ASSERT_TRUE(r.reply.is_error());
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kIoError);
  EXPECT_NE(r.reply.error.message().find("outcome unknown"), std::string::npos);
  EXPECT_EQ(h.node().state().session_count(), 1u) << "a failed batch must not be applied";
  const NodeStats s = h.node().stats();
  EXPECT_EQ(s.failure.code(), ErrorCode::kIoError);
  // Every later write is refused with a clear error; reads still work.
  const core::ApplyResult later = h.commit(core::OpenSession{10'000, "y"});
  EXPECT_EQ(later.reply.error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(later.reply.error.message().find("node stopped"), std::string::npos);
  EXPECT_EQ(h.node().state().session_count(), 1u);
  EXPECT_FALSE(h.node().next_timer_deadline().has_value()) << "a stopped node proposes nothing";
}

TEST(NodeGroupCommit, RetryableLogErrorFailsOnlyThatBatch) {
  NodeHarness h;
  h.open();
  {
    std::lock_guard lock(h.control().mu);
    h.control().fail_next = Status(ErrorCode::kUnavailable, "injected: etcd unreachable");
  }
  const core::ApplyResult r = h.commit(core::OpenSession{10'000, "x"});
  EXPECT_EQ(r.reply.error.code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(h.node().stats().failure.is_ok());
  const core::ApplyResult ok = h.commit(core::OpenSession{10'000, "y"});
  EXPECT_FALSE(ok.reply.is_error());
  EXPECT_EQ(h.node().state().session_count(), 1u);
}

TEST(NodeGroupCommit, ShutdownFlushesAcceptedProposalsThenRefuses) {
  NodeHarness h;
  h.open();
  h.control().set_hold(true);
  int ok = 0;
  for (int i = 0; i < 5; ++i) {
    h.node().propose(open_session_command(), [&ok](const core::ApplyResult& r) { ok += r.reply.is_error() ? 0 : 1; });
  }
  bool down = false;
  h.node().shutdown([&down] { down = true; });
  std::optional<core::ApplyResult> refused;
  h.node().propose(open_session_command(), [&refused](const core::ApplyResult& r) { refused = r; });
  EXPECT_FALSE(refused.has_value()) << "done must never run inside propose()";
  h.loop().run_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(down) << "shutdown finished with an append in flight";
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->reply.error.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(refused->reply.error.message(), "shutting down");
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return down; }));
  EXPECT_EQ(ok, 5);
  EXPECT_EQ(h.node().state().session_count(), 5u);
}

TEST(NodeGroupCommit, TooManyPendingProposalsAreRefused) {
  NodeOptions options;
  options.max_pending_proposals = 3;
  NodeHarness h(options);
  h.open();
  h.control().set_hold(true);
  std::vector<ErrorCode> codes;
  for (int i = 0; i < 4; ++i) {
    h.node().propose(open_session_command(), [&codes](const core::ApplyResult& r) { codes.push_back(r.reply.error.code()); });
  }
  h.control().set_hold(false);
  h.control().release();
  ASSERT_TRUE(h.loop().run_until([&] { return codes.size() == 4; }));
  EXPECT_EQ(std::count(codes.begin(), codes.end(), ErrorCode::kLimitExceeded), 1);
}

}  // namespace
}  // namespace leasehold::node
