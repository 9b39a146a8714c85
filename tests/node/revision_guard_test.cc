// The revision guard: plan_reopen's decision table (node/revision_guard.h)
// and the record kept ahead of every batch, with a store function that
// records what it was asked to write (and can fail).
#include <gtest/gtest.h>

#include "node/revision_guard.h"

namespace leasehold::node {
namespace {

using log::LoadedRevisionRecord;
using log::RevisionRecord;
using State = LoadedRevisionRecord::State;

RevisionGuardOptions options(State state, RevisionRecord record = {}) {
  RevisionGuardOptions o;
  o.store = [](const RevisionRecord&) { return Status::ok(); };
  o.loaded.state = state;
  o.loaded.record = record;
  o.loaded.where = "/d/revision-record.{a,b}";
  o.block = 100;
  o.max_ttl_fallback_ms = 60'000;
  return o;
}

core::Command open_session(std::uint64_t ttl) {
  core::Command c;
  c.body = core::OpenSession{ttl, "x"};
  return c;
}

TEST(RevisionGuardPlan, NewDataDirReservesTheFirstBlock) {
  auto plan = plan_reopen(options(State::kAbsent), 0, /*log_empty=*/true, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  EXPECT_FALSE(plan->reopen);
  EXPECT_EQ(plan->record.reserved_through, 100U);
  EXPECT_FALSE(plan->record.clean);
}

TEST(RevisionGuardPlan, CleanRecordAtTheLogsEndStartsAsIs) {
  auto plan = plan_reopen(options(State::kValid, {500, 400, 3000, 450, true}), 450, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  EXPECT_FALSE(plan->reopen);
  EXPECT_FALSE(plan->store_now);  // clean until the first append
  EXPECT_EQ(plan->record.reserved_through, 500U);
}

TEST(RevisionGuardPlan, CleanRecordAboveTheLogIsRefusedNamingTheRange) {
  auto plan = plan_reopen(options(State::kValid, {500, 400, 3000, 450, true}), 12, false, "rocksdb /d");
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.status().code(), ErrorCode::kCorruption);
  const std::string m = plan.status().message();
  EXPECT_NE(m.find("revisions 13..450 are missing"), std::string::npos) << m;
  EXPECT_NE(m.find("/d/revision-record.{a,b}"), std::string::npos) << m;
  EXPECT_NE(m.find("rocksdb /d"), std::string::npos) << m;
  EXPECT_NE(m.find("--recover-lost-log"), std::string::npos) << m;
}

TEST(RevisionGuardPlan, RecoveryStartsAboveTheRecordExpiresAndQuarantines) {
  auto o = options(State::kValid, {500, 400, 3000, 450, true});
  o.recover_lost_log = true;
  auto plan = plan_reopen(o, 12, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->reopen);
  EXPECT_EQ(plan->reopen->revision_floor, 501U);
  EXPECT_TRUE(plan->reopen->expire_sessions);
  EXPECT_EQ(plan->reopen->quarantine_ms, 3000U + 30U + 2U);
  EXPECT_EQ(plan->record.reserved_through, 601U);
  EXPECT_EQ(plan->record.max_ttl_ms, 3000U);
}

TEST(RevisionGuardPlan, UncleanStopContinuesAboveTheBlock) {
  auto plan = plan_reopen(options(State::kValid, {500, 400, 3000, 0, false}), 420, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->reopen);
  EXPECT_EQ(plan->reopen->revision_floor, 501U);
  EXPECT_FALSE(plan->reopen->expire_sessions);
  EXPECT_EQ(plan->reopen->quarantine_ms, 0U);
  // Below what the record saw durable: refused.
  auto refused = plan_reopen(options(State::kValid, {500, 400, 3000, 0, false}), 399, false, "log");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("revisions 400..400"), std::string::npos) << refused.status().message();
}

TEST(RevisionGuardPlan, UncleanStopOfALeaseRunQuarantines) {
  RevisionRecord rec{500, 400, 3000, 0, false};
  rec.lease = true;
  auto plan = plan_reopen(options(State::kValid, rec), 420, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->reopen);
  EXPECT_TRUE(plan->reopen->expire_sessions);
  EXPECT_EQ(plan->reopen->quarantine_ms, 3032U);
}

TEST(RevisionGuardPlan, NoValidRecordOverALogNeedsAFloor) {
  for (State state : {State::kAbsent, State::kCorrupt}) {
    auto o = options(state);
    auto refused = plan_reopen(o, 42, false, "log");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.status().message().find("--revision-floor"), std::string::npos);
    o.recover_lost_log = true;
    EXPECT_FALSE(plan_reopen(o, 42, false, "log"));
    o.revision_floor = 9000;
    auto plan = plan_reopen(o, 42, false, "log");
    ASSERT_TRUE(plan) << plan.status().to_string();
    ASSERT_TRUE(plan->reopen);
    EXPECT_EQ(plan->reopen->revision_floor, 9001U);
    EXPECT_EQ(plan->reopen->quarantine_ms, 60'000U + 600U + 2U);
  }
}

TEST(RevisionGuard, RewritesTheRecordBeforeABatchCouldPassItsBlock) {
  std::vector<RevisionRecord> stored;
  RevisionGuard guard([&](const RevisionRecord& r) { stored.push_back(r); return Status::ok(); },
                      RevisionRecord{100, 0, 0, 0, false}, /*bound=*/95, /*block=*/100, /*lease=*/false);
  std::vector<core::Command> batch(5, open_session(1000));
  ASSERT_TRUE(guard.before_append(batch, 95));
  ASSERT_EQ(stored.size(), 1U);  // the TTL grew (0 -> 1000); the block still holds 96..100
  EXPECT_EQ(stored.back().reserved_through, 100U);
  EXPECT_EQ(stored.back().max_ttl_ms, 1000U);
  ASSERT_TRUE(guard.before_append({open_session(10)}, 100));  // 101 > 100: a new block
  ASSERT_EQ(stored.size(), 2U);
  EXPECT_EQ(stored.back().reserved_through, 201U);
  EXPECT_EQ(stored.back().durable_revision, 100U);
  EXPECT_EQ(stored.back().max_ttl_ms, 1000U);
  // A Reopen jumps the bound to its floor.
  core::Command reopen;
  reopen.body = core::Reopen{1000, false, 0};
  ASSERT_TRUE(guard.before_append({reopen}, 101));
  EXPECT_EQ(stored.back().reserved_through, 1100U);
  ASSERT_TRUE(guard.mark_clean(1000));
  EXPECT_TRUE(stored.back().clean);
  EXPECT_EQ(stored.back().clean_revision, 1000U);
}

TEST(RevisionGuard, TheFirstAppendAfterACleanStartUncleansTheRecord) {
  std::vector<RevisionRecord> stored;
  RevisionGuard guard([&](const RevisionRecord& r) { stored.push_back(r); return Status::ok(); },
                      RevisionRecord{100, 50, 0, 50, true}, 50, 100, /*lease=*/true);
  ASSERT_TRUE(guard.before_append({open_session(0)}, 50));
  ASSERT_EQ(stored.size(), 1U);
  EXPECT_FALSE(stored.back().clean);
  EXPECT_TRUE(stored.back().lease);
  ASSERT_TRUE(guard.before_append({open_session(0)}, 51));
  EXPECT_EQ(stored.size(), 1U);  // nothing new to record
}

// A TTL the state machine refuses (outside --min-ttl-ms..--max-ttl-ms) opens
// nothing, so it must not set the quarantine: recorded, 18264103043276783777
// made the drift margin wrap to a quarantine of 0 ms, and UINT64_MAX locked
// every later lease-mode crash out for 1.8e17 ms.
TEST(RevisionGuard, ARefusedTtlIsNotRecorded) {
  std::vector<RevisionRecord> stored;
  RevisionGuard guard([&](const RevisionRecord& r) { stored.push_back(r); return Status::ok(); },
                      RevisionRecord{100, 0, 0, 0, false, true}, 10, 100, /*lease=*/true,
                      core::TtlRange{100, 3'600'000});
  ASSERT_TRUE(guard.before_append({open_session(18264103043276783777ULL), open_session(UINT64_MAX),
                                   open_session(3'600'001), open_session(99)},
                                  10));
  EXPECT_EQ(guard.record().max_ttl_ms, 0U);
  EXPECT_TRUE(stored.empty()) << "nothing to record: every TTL was refused";
  ASSERT_TRUE(guard.before_append({open_session(30'000)}, 10));
  ASSERT_EQ(stored.size(), 1U);
  EXPECT_EQ(stored.back().max_ttl_ms, 30'000U);
}

TEST(RevisionGuardPlan, TheDriftMarginNeverWraps) {
  constexpr std::uint64_t kMax = core::kMaxSessionTtlMs;
  EXPECT_EQ(with_drift_margin(18264103043276783777ULL), kMax + kMax / 100 + 2);
  EXPECT_EQ(with_drift_margin(UINT64_MAX), kMax + kMax / 100 + 2);
  EXPECT_EQ(with_drift_margin(30'000), 30'302U);
  // A record written before TTLs were checked, with a TTL no session can have.
  auto o = options(State::kValid, {500, 400, 18264103043276783777ULL, 0, false, true});
  auto plan = plan_reopen(o, 450, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->reopen);
  EXPECT_EQ(plan->reopen->quarantine_ms, kMax + kMax / 100 + 2);
}

// After a lease-mode crash, a start in fsync mode owes a quarantine until its
// Reopen is durable. Its record keeps the lease flag until then: if it stops
// before (kill -9, a failed start), the next start quarantines again instead
// of finding an unclean fsync-mode record and skipping the quarantine.
TEST(RevisionGuardPlan, AnOwedQuarantineKeepsTheLeaseFlagUntilItsReopenIsDurable) {
  auto o = options(State::kValid, {500, 400, 30'000, 0, false, /*lease=*/true});
  o.lease = false;  // this start is in fsync mode
  auto plan = plan_reopen(o, 450, false, "log");
  ASSERT_TRUE(plan) << plan.status().to_string();
  ASSERT_TRUE(plan->reopen);
  EXPECT_TRUE(plan->reopen->expire_sessions);
  EXPECT_EQ(plan->reopen->quarantine_ms, 30'302U);
  ASSERT_TRUE(owes_quarantine(*plan));
  EXPECT_TRUE(plan->record.lease) << "stored at open: a stop before the Reopen is written quarantines again";
  std::vector<RevisionRecord> stored;
  RevisionGuard guard([&](const RevisionRecord& r) { stored.push_back(r); return Status::ok(); }, plan->record, 450,
                      100, /*lease=*/false, core::TtlRange{}, owes_quarantine(*plan));
  core::Command reopen;
  reopen.body = *plan->reopen;
  ASSERT_TRUE(guard.before_append({reopen, open_session(1000)}, 450));
  EXPECT_TRUE(guard.record().lease) << "the batch carrying the Reopen is not durable yet";
  ASSERT_TRUE(guard.before_append({open_session(1000)}, 502));
  EXPECT_FALSE(guard.record().lease) << "the next append follows a durable Reopen";
  ASSERT_FALSE(stored.empty());
  EXPECT_FALSE(stored.back().lease);
}

TEST(RevisionGuard, AFailedStoreIsReported) {
  RevisionGuard guard([](const RevisionRecord&) { return Status(ErrorCode::kIoError, "disk full"); },
                      RevisionRecord{10, 0, 0, 0, false}, 10, 10, false);
  Status st = guard.before_append({open_session(5)}, 10);
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_EQ(guard.record().reserved_through, 10U);
}

}  // namespace
}  // namespace leasehold::node
