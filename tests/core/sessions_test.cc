// Unit tests: session commands and their error paths.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core_test_util.h"

namespace leasehold::core::testing {
namespace {

TEST(CoreSessions, OpenGivesRevisionAsIdAndStartsTimer) {
  Harness h;
  ApplyResult r = h.run(OpenSession{5'000, "alice"});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  EXPECT_EQ(r.reply.session, 1U);
  EXPECT_EQ(h.sm.revision(), 1U);
  ASSERT_EQ(r.effects.size(), 1U);
  EXPECT_EQ(std::get<SessionStarted>(r.effects[0]), (SessionStarted{1, 5'000}));
  auto info = h.sm.session(1);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->owner, "alice");
  EXPECT_EQ(info->ttl_ms, 5'000U);
  EXPECT_EQ(info->opened_at, 1'000U);
  EXPECT_EQ(h.open(), 2U);
  EXPECT_EQ(h.sm.session_count(), 2U);
  EXPECT_EQ(h.sm.sessions().front().id, 1U);
}

// Paged listing: ascending ids after the cursor, ended sessions skipped,
// also across the compaction of ended ids and after a snapshot restore.
TEST(CoreSessions, PagesListLiveSessionsInIdOrder) {
  Harness h;
  std::vector<SessionId> live;
  for (int i = 0; i < 3000; ++i) {
    const SessionId id = h.open();
    if (i % 6 == 0 || i >= 2990) {
      live.push_back(id);
    } else {
      ASSERT_FALSE(h.run(CloseSession{id}).reply.is_error());
    }
  }
  const auto page_through = [](const StateMachine& sm) {
    std::vector<SessionId> seen;
    SessionId after = 0;
    for (auto page = sm.sessions(after, 7); !page.empty(); page = sm.sessions(after, 7)) {
      EXPECT_LE(page.size(), 7U);
      for (const auto& s : page) seen.push_back(s.id);
      after = seen.back();
    }
    return seen;
  };
  EXPECT_EQ(page_through(h.sm), live);
  EXPECT_EQ(h.sm.sessions(live[3], 2).front().id, live[4]);
  EXPECT_TRUE(h.sm.sessions(live.back(), 10).empty());
  auto restored = StateMachine::restore(h.sm.snapshot());
  ASSERT_TRUE(restored.is_ok());
  EXPECT_EQ(page_through(*restored), live);
}

TEST(CoreSessions, OpenErrors) {
  Limits lim;
  lim.max_sessions = 1;
  lim.max_owner_bytes = 4;
  Harness h(lim);
  h.expect_error(OpenSession{0, "x"}, ErrorCode::kInvalidArgument);
  h.expect_error(OpenSession{lim.min_ttl_ms - 1, "x"}, ErrorCode::kInvalidArgument);
  h.expect_error(OpenSession{lim.max_ttl_ms + 1, "x"}, ErrorCode::kLimitExceeded);
  h.expect_error(OpenSession{100, "12345"}, ErrorCode::kLimitExceeded);
  h.open(100, "1234");
  h.expect_error(OpenSession{100, "x"}, ErrorCode::kLimitExceeded);
}

// A session record keeps its TTL in 31 bits: whatever Limits says, no TTL
// over kMaxSessionTtlMs is taken, and the largest one round-trips through
// the record, the snapshot and the query.
TEST(CoreSessions, NoTtlOverTheLargestIsTakenWhateverTheLimitsSay) {
  Limits lim;
  lim.max_ttl_ms = std::numeric_limits<std::uint64_t>::max();
  Harness h(lim);
  h.expect_error(OpenSession{kMaxSessionTtlMs + 1, "x"}, ErrorCode::kLimitExceeded);
  h.expect_error(OpenSession{std::uint64_t{1} << 32, "x"}, ErrorCode::kLimitExceeded);
  const SessionId id = h.open(kMaxSessionTtlMs, "longest");
  h.expect_error(SetSessionTtl{id, kMaxSessionTtlMs + 1}, ErrorCode::kLimitExceeded);
  ASSERT_TRUE(h.sm.session(id).has_value());
  EXPECT_EQ(h.sm.session(id)->ttl_ms, kMaxSessionTtlMs);
  EXPECT_EQ(h.sm.session(id)->owner, "longest");
  auto restored = StateMachine::restore(h.sm.snapshot(), lim);
  ASSERT_TRUE(restored.is_ok());
  ASSERT_TRUE(restored->session(id).has_value());
  EXPECT_EQ(restored->session(id)->ttl_ms, kMaxSessionTtlMs);
  EXPECT_EQ(restored->session(id)->owner, "longest");
}

TEST(CoreSessions, CloseEffects) {
  Harness h;
  SessionId a = h.open(), b = h.open(), c = h.open();
  h.grant(acq("L", a, LockMode::kExclusive, false, 0, 5'000));
  h.grant(acq("W", c));
  h.queue(acq("W", a));
  h.queue(acq("L", b));
  ApplyResult r = h.run(CloseSession{a});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  EXPECT_TRUE(effects_of<LockLost>(r).empty());
  EXPECT_TRUE(effects_of<WakeAt>(r).empty());
  auto granted = effects_of<Granted>(r);
  ASSERT_EQ(granted.size(), 1U);
  EXPECT_EQ(granted[0].session, b);
  EXPECT_EQ(granted[0].token, h.sm.revision());
  auto ended = effects_of<WaitEnded>(r);
  ASSERT_EQ(ended.size(), 1U);
  EXPECT_EQ(ended[0], (WaitEnded{"W", a, 0, WaitEndReason::kSessionEnded}));
  ASSERT_EQ(effects_of<SessionEnded>(r).size(), 1U);
  EXPECT_EQ(effects_of<SessionEnded>(r)[0].reason, SessionEndReason::kClosed);
  EXPECT_FALSE(h.sm.session(a));
  EXPECT_EQ(h.sm.lock("W")->waiters.size(), 0U);
  h.expect_error(CloseSession{a}, ErrorCode::kSessionExpired);
}

TEST(CoreSessions, ExpireAppliesLockDelayAndAnnouncesLoss) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a, LockMode::kExclusive, false, 0, 500));
  h.queue(acq("L", b));
  h.now = 2'000;
  ApplyResult r = h.run(ExpireSession{a});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  ASSERT_EQ(effects_of<LockLost>(r).size(), 1U);
  EXPECT_EQ(effects_of<LockLost>(r)[0], (LockLost{"L", a, t, LossReason::kExpired}));
  ASSERT_EQ(effects_of<WakeAt>(r).size(), 1U);
  EXPECT_EQ(effects_of<WakeAt>(r)[0].at, 2'500U);
  EXPECT_TRUE(effects_of<Granted>(r).empty());
  EXPECT_EQ(effects_of<SessionEnded>(r)[0].reason, SessionEndReason::kExpired);
  EXPECT_EQ(h.sm.lock("L")->delay_until, 2'500U);
  // During the delay nobody gets it; a tick too early grants nothing.
  SessionId c = h.open();
  h.expect_error(acq("L", c), ErrorCode::kWouldBlock);
  h.now = 2'499;
  EXPECT_TRUE(effects_of<Granted>(h.run(Tick{})).empty());
  h.now = 2'500;
  ApplyResult tick = h.run(Tick{});
  ASSERT_EQ(effects_of<Granted>(tick).size(), 1U);
  EXPECT_EQ(effects_of<Granted>(tick)[0].session, b);
  EXPECT_EQ(h.sm.lock("L")->delay_until, 0U);
}

TEST(CoreSessions, DelayEndsOnAnyLaterCommand) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  h.grant(acq("L", a, LockMode::kExclusive, false, 0, 100));
  h.queue(acq("L", b));
  h.run(KillSession{a});
  h.now += 100;
  ApplyResult r = h.run(OpenSession{1'000, ""});  // unrelated command
  ASSERT_EQ(effects_of<Granted>(r).size(), 1U);
  EXPECT_EQ(effects_of<Granted>(r)[0].token, h.sm.revision());
}

TEST(CoreSessions, DelayedLockWithoutWaitersIsForgottenAfterDelay) {
  Harness h;
  SessionId a = h.open();
  h.grant(acq("L", a, LockMode::kExclusive, false, 0, 100));
  ApplyResult k = h.run(KillSession{a});
  EXPECT_EQ(effects_of<LockLost>(k)[0].reason, LossReason::kKilled);
  EXPECT_EQ(effects_of<SessionEnded>(k)[0].reason, SessionEndReason::kKilled);
  EXPECT_EQ(h.sm.lock_count(), 1U);
  auto timers = h.sm.pending_timers();
  ASSERT_EQ(timers.size(), 1U);
  EXPECT_EQ(std::get<WakeAt>(timers[0]).at, 1'100U);
  h.now = 1'100;
  h.run(Tick{});
  EXPECT_EQ(h.sm.lock_count(), 0U);
  // An acquire at or after the delay end is granted even before a Tick.
  SessionId b = h.open();
  h.grant(acq("M", b, LockMode::kExclusive, false, 0, 50));
  h.run(ExpireSession{b});
  SessionId c = h.open();
  h.now = 1'150;
  h.grant(acq("M", c));
}

TEST(CoreSessions, ReleaseAndRevokeDoNotDelay) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  Token t = h.grant(acq("L", a, LockMode::kExclusive, false, 0, 1'000));
  ASSERT_EQ(h.run(Release{"L", a, t}).reply.code, ReplyCode::kOk);
  h.grant(acq("L", b, LockMode::kExclusive, false, 0, 1'000));
  ApplyResult r = h.run(Revoke{"L"});
  EXPECT_TRUE(effects_of<WakeAt>(r).empty());
  EXPECT_EQ(h.sm.lock_count(), 0U);
}

TEST(CoreSessions, ExpireKillErrors) {
  Harness h;
  h.expect_error(ExpireSession{42}, ErrorCode::kNotFound);
  h.expect_error(KillSession{42}, ErrorCode::kNotFound);
  h.expect_error(SetSessionTtl{42, 100}, ErrorCode::kSessionExpired);
}

TEST(CoreSessions, SetTtl) {
  Harness h;
  SessionId a = h.open();
  ApplyResult r = h.run(SetSessionTtl{a, 777});
  ASSERT_EQ(r.reply.code, ReplyCode::kOk);
  EXPECT_EQ(std::get<SessionTtlChanged>(r.effects.at(0)), (SessionTtlChanged{a, 777}));
  EXPECT_EQ(h.sm.session(a)->ttl_ms, 777U);
  h.expect_error(SetSessionTtl{a, 0}, ErrorCode::kInvalidArgument);
  h.expect_error(SetSessionTtl{a, h.sm.limits().max_ttl_ms + 1}, ErrorCode::kLimitExceeded);
}

TEST(CoreSessions, SessionInfoCounts) {
  Harness h;
  SessionId a = h.open(), b = h.open();
  h.grant(acq("L", a));
  h.grant(acq("M", a));
  h.queue(acq("L", b));
  EXPECT_EQ(h.sm.session(a)->held, 2U);
  EXPECT_EQ(h.sm.session(b)->waiting, 1U);
  EXPECT_EQ(h.sm.session(b)->held, 0U);
}

}  // namespace
}  // namespace leasehold::core::testing
