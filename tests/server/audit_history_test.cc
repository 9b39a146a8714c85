// The audit history's parts without a process: EventDeriver over a real
// StateMachine (server/observability/audit_event.h), HistoryStore durability, torn tails
// and retention (server/observability/history_store.h), and the metrics text (server/observability/metrics.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "core/state_machine.h"
#include "server/observability/audit_event.h"
#include "server/observability/history_store.h"
#include "server/observability/metrics.h"
#include "testkit/eventually.h"
#include "testkit/temp_dir.h"

namespace leasehold::server {
namespace {

class Deriver : public ::testing::Test {
 protected:
  std::vector<AuditEvent> run(core::CommandBody body) {
    core::Command c;
    c.now = now;
    c.body = std::move(body);
    const core::ApplyResult r = sm.apply(c);
    return d.derive(c, r, sm);
  }
  core::SessionId open(const std::string& owner) {
    core::Command c;
    c.now = now;
    c.body = core::OpenSession{60'000, owner};
    return sm.apply(c).reply.session;
  }
  static core::Acquire acq(const std::string& lock, core::SessionId s, bool wait = false, std::uint64_t delay = 0) {
    core::Acquire a;
    a.lock = lock;
    a.session = s;
    a.wait = wait;
    a.delay_ms = delay;
    return a;
  }
  core::StateMachine sm;
  EventDeriver d;
  core::LogMillis now = 1000;
};

TEST_F(Deriver, GrantQueueReleaseWithWaitAndHoldTimes) {
  const auto a = open("alice");
  const auto b = open("bob");
  auto ev = run(acq("L", a));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AuditKind::kGrant);
  EXPECT_EQ(ev[0].owner, "alice");
  EXPECT_EQ(ev[0].reason, "acquired");
  EXPECT_EQ(ev[0].cause, AuditCause::kAcquired);
  const core::Token t1 = ev[0].token;
  EXPECT_TRUE(run(acq("L", b, true)).empty());  // queued: no event yet
  now += 250;
  ev = run(core::Release{"L", a, t1});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, AuditKind::kRelease);
  EXPECT_EQ(ev[0].hold_ms, 250);
  EXPECT_EQ(ev[0].token, t1);
  EXPECT_EQ(ev[1].kind, AuditKind::kGrant);
  EXPECT_EQ(ev[1].session, b);
  EXPECT_EQ(ev[1].owner, "bob");
  EXPECT_EQ(ev[1].wait_ms, 250);
  EXPECT_GT(ev[1].token, t1);
  // A refused command yields nothing.
  EXPECT_TRUE(run(core::Release{"L", a, t1}).empty());
}

TEST_F(Deriver, ExpiryWithLockDelayKillRevokeAndClose) {
  const auto a = open("a");
  run(acq("X", a, false, 5000));
  now += 10;
  auto ev = run(core::ExpireSession{a});
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].kind, AuditKind::kExpiry);
  EXPECT_TRUE(ev[0].lock.empty());
  EXPECT_EQ(ev[0].owner, "a") << "the session's record names its owner (from its holds)";
  EXPECT_EQ(ev[1].kind, AuditKind::kExpiry);
  EXPECT_EQ(ev[1].lock, "X");
  EXPECT_EQ(ev[1].hold_ms, 10);
  EXPECT_EQ(ev[2].kind, AuditKind::kLockDelay);
  EXPECT_EQ(ev[2].delay_ms, 5000);

  const auto k = open("k");
  run(acq("K", k));
  ev = run(core::KillSession{k});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, AuditKind::kKill);
  EXPECT_EQ(ev[0].owner, "k");
  EXPECT_EQ(ev[1].kind, AuditKind::kKill);
  EXPECT_EQ(ev[1].lock, "K");

  const auto r = open("r");
  run(acq("R", r));
  ev = run(core::Revoke{"R"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AuditKind::kRevoke);
  EXPECT_EQ(ev[0].session, r);
  ev = run(core::Revoke{"R"});  // nobody holds it any more: refused (kNotFound), no event
  EXPECT_TRUE(ev.empty());

  const auto c = open("c");
  run(acq("C1", c));
  run(acq("C2", c));
  ev = run(core::CloseSession{c});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, AuditKind::kRelease);
  EXPECT_EQ(ev[0].reason, "session closed");
  EXPECT_EQ(ev[0].cause, AuditCause::kSessionClosed);
  EXPECT_EQ(ev[1].lock, "C2");
}

TEST_F(Deriver, CompatKeysAreGrantsAndReleases) {
  core::CompatSet set;
  set.key = "k";
  set.value = "v";
  set.ttl_ms = 10'000;
  set.condition = core::CompatCondition::kIfAbsent;
  auto ev = run(set);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AuditKind::kGrant);
  EXPECT_EQ(ev[0].reason, "compat set");
  EXPECT_EQ(ev[0].cause, AuditCause::kCompatSet);
  EXPECT_EQ(ev[0].lock, "k");
  EXPECT_TRUE(run(set).empty());  // NX on a present key: refused, nothing recorded
  now += 5;
  ev = run(core::CompatDelete{"k", std::nullopt});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, AuditKind::kRelease);
  EXPECT_EQ(ev[0].reason, "compat delete");
  EXPECT_EQ(ev[0].cause, AuditCause::kCompatDelete);
  EXPECT_EQ(ev[0].hold_ms, 5);
}

TEST_F(Deriver, ResetFromStateKnowsExistingHolds) {
  const auto a = open("a");
  const core::Token t = run(acq("H", a))[0].token;
  EventDeriver fresh;
  fresh.reset(sm);
  now += 40;
  core::Command c;
  c.now = now;
  c.body = core::Release{"H", a, t};
  const core::ApplyResult r = sm.apply(c);
  const auto ev = fresh.derive(c, r, sm);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].hold_ms, 40);
  EXPECT_EQ(ev[0].owner, "a");
}

AuditEvent event(const std::string& lock, core::Token token) {
  AuditEvent e;
  e.kind = AuditKind::kGrant;
  e.lock = lock;
  e.session = 7;
  e.owner = "o";
  e.token = token;
  e.cause = AuditCause::kAcquired;
  e.reason = "acquired";
  return e;
}

// Records 1..n of lock "a", each numbered i in every field.
void append_numbered(HistoryStore& s, int n) {
  for (int i = 1; i <= n; ++i) s.append(i, i, i, event("a", i));
}

// A store on `dir`/history.log keeping `max_entries`.
HistoryOptions options_in(testing::TempDir& dir, std::size_t max_entries) {
  HistoryOptions o;
  o.path = dir.file("history.log");
  o.max_entries = max_entries;
  return o;
}

TEST(HistoryStoreTest, SurvivesReopenAndContinuesIds) {
  testing::TempDir dir("history-store");
  HistoryOptions o;
  o.path = dir.file("h/history.log");
  {
    auto s = HistoryStore::open(o);
    ASSERT_TRUE(s) << s.status().to_string();
    for (int i = 1; i <= 5; ++i) (*s)->append(1000 + i, i, i, event(i % 2 ? "odd" : std::string("ev\0n", 4), i));
  }
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)->size(), 5u);
  EXPECT_EQ((*s)->last_id(), 5u);
  const auto odd = (*s)->query(true, "odd", 10);
  ASSERT_EQ(odd.size(), 3u);
  EXPECT_EQ(odd[0].id, 5u);  // newest first
  EXPECT_EQ(odd[2].id, 1u);
  EXPECT_EQ((*s)->query(true, std::string("ev\0n", 4), 10).size(), 2u);
  EXPECT_EQ((*s)->query(false, "", 2, 3).size(), 2u);  // before id 3: ids 2, 1
  EXPECT_EQ((*s)->append(0, 6, 6, event("x", 6)).id, 6u);
}

// A background fdatasync that fails (EIO) is counted and logged; it used to
// be ignored.
TEST(HistoryStoreTest, AFailedBackgroundSyncIsCounted) {
  testing::TempDir dir("history-store");
  HistoryOptions o;
  o.path = dir.file("history.log");
  o.sync_interval = std::chrono::milliseconds(1);
  o.sync_file = [](int) {
    errno = EIO;
    return -1;
  };
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s) << s.status().to_string();
  EXPECT_EQ((*s)->write_errors(), 0u);
  (*s)->append(1000, 1, 1, event("a", 1));
  (*s)->flush();
  EXPECT_TRUE(testing::eventually([&] { return (*s)->write_errors() >= 1; }, std::chrono::seconds(10)));
  EXPECT_EQ((*s)->size(), 1u);  // still served from memory
}

// The sync thread is woken only by the first write after a sync; no burst
// of writes may be left unsynced by a lost wake.
std::atomic<int> history_syncs{0};
TEST(HistoryStoreTest, EveryBurstOfRecordsIsSyncedAfterIt) {
  testing::TempDir dir("history-store");
  HistoryOptions o;
  o.path = dir.file("history.log");
  o.sync_interval = std::chrono::milliseconds(1);
  o.sync_file = [](int fd) {
    history_syncs.fetch_add(1);
    return ::fdatasync(fd);
  };
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s) << s.status().to_string();
  for (int round = 1; round <= 20; ++round) {
    const int before = history_syncs.load();
    for (int k = 0; k < round; ++k) {
      (*s)->append(1000 + k, 1, 1, event("a", 1));
      if (k % 2 == 1) (*s)->flush();  // some bursts are several writes
    }
    (*s)->flush();
    EXPECT_TRUE(testing::eventually([&] { return history_syncs.load() > before; }, std::chrono::seconds(10)))
        << "round " << round << ": records written after a sync were never synced";
  }
  EXPECT_EQ((*s)->write_errors(), 0u);
}

// Appends are buffered; flush() writes them all at once (the server flushes
// before any reply leaves: one write per batch, not per record), and a
// reopen sees them.
TEST(HistoryStoreTest, AppendsReachTheFileAtTheNextFlush) {
  testing::TempDir dir("history-flush");
  HistoryOptions o;
  o.path = dir.file("history.log");
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s) << s.status().to_string();
  const auto empty = std::filesystem::file_size(o.path);
  append_numbered(**s, 3);
  EXPECT_EQ(std::filesystem::file_size(o.path), empty);
  EXPECT_EQ((*s)->size(), 3u);  // served from memory before the flush
  (*s)->flush();
  const auto three = std::filesystem::file_size(o.path);
  EXPECT_GT(three, empty);
  (*s)->flush();  // nothing buffered: nothing written
  EXPECT_EQ(std::filesystem::file_size(o.path), three);
  // What a kill -9 right now would leave: the file as it is.
  const std::string copy = dir.file("copy.log");
  std::filesystem::copy_file(o.path, copy);
  HistoryOptions c;
  c.path = copy;
  auto reopened = HistoryStore::open(c);
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->size(), 3u);
  EXPECT_EQ((*reopened)->dropped_at_open(), 0u);
}

TEST(HistoryStoreTest, TornTailIsCutAndLaterAppendsSurvive) {
  testing::TempDir dir("history-torn");
  HistoryOptions o;
  o.path = dir.file("history.log");
  {
    auto s = HistoryStore::open(o);
    ASSERT_TRUE(s);
    (*s)->append(1, 1, 1, event("a", 1));
    (*s)->append(2, 2, 2, event("a", 2));
  }
  const auto full = std::filesystem::file_size(o.path);
  std::filesystem::resize_file(o.path, full - 3);  // a crash mid-write
  {
    auto s = HistoryStore::open(o);
    ASSERT_TRUE(s);
    EXPECT_EQ((*s)->size(), 1u);
    EXPECT_EQ((*s)->dropped_at_open(), 1u);
    (*s)->append(3, 3, 3, event("a", 3));
  }
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s);
  const auto all = (*s)->query(false, "", 10);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].event.token, 3u);
  EXPECT_EQ(all[1].event.token, 1u);
}

std::uintmax_t size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(HistoryStoreTest, RetentionBoundsMemoryAndFile) {
  testing::TempDir dir("history-bound");
  HistoryOptions o;
  o.path = dir.file("history.log");
  o.max_entries = 10;
  std::uintmax_t biggest = 0;
  {
    auto s = HistoryStore::open(o);
    ASSERT_TRUE(s);
    for (int i = 1; i <= 95; ++i) {
      (*s)->append(i, i, i, event("lock", i));
      if (i % 3 == 0) (*s)->flush();
      biggest = std::max(biggest, size_or_zero(o.path) + size_or_zero(o.path + ".old"));
      ASSERT_LE((*s)->size(), 10u);
    }
  }
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s);
  const auto all = (*s)->query(false, "", 100);
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front().id, 95u);
  EXPECT_EQ(all.back().id, 86u);
  EXPECT_EQ((*s)->dropped_at_open(), 0u);
  const std::uintmax_t one = std::filesystem::file_size(o.path + ".old") / 10;
  EXPECT_LE(biggest, one * 20 + 64);  // never more than 2 x max_entries records in both files
}

// A full file is renamed to history.log.old, not rewritten: the old
// segment's bytes are exactly what was appended, and the records of both
// segments come back at open.
TEST(HistoryStoreTest, AFullFileBecomesTheOldSegmentUnchanged) {
  testing::TempDir dir("history-rotate");
  HistoryOptions o = options_in(dir, 4);
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s);
  append_numbered(**s, 3);
  (*s)->flush();
  const std::string three = file_bytes(o.path);
  EXPECT_FALSE(std::filesystem::exists(o.path + ".old"));
  (*s)->append(4, 4, 4, event("a", 4));  // the fourth record fills the file: written at once, then renamed
  EXPECT_TRUE(file_bytes(o.path + ".old").starts_with(three));
  EXPECT_GT(file_bytes(o.path + ".old").size(), three.size());
  EXPECT_EQ(file_bytes(o.path), "leasehold-history-v1\n");
  (*s)->append(5, 5, 5, event("b", 5));
  (*s)->flush();
  // What a kill -9 right now would leave: both files as they are.
  const std::string copy = dir.file("copy/history.log");
  std::filesystem::create_directories(dir.file("copy"));
  std::filesystem::copy_file(o.path, copy);
  std::filesystem::copy_file(o.path + ".old", copy + ".old");
  HistoryOptions c = o;
  c.path = copy;
  auto reopened = HistoryStore::open(c);
  ASSERT_TRUE(reopened) << reopened.status().to_string();
  const auto all = (*reopened)->query(false, "", 10);
  ASSERT_EQ(all.size(), 4u);  // max_entries of the five
  EXPECT_EQ(all.front().id, 5u);
  EXPECT_EQ(all.back().id, 2u);
  EXPECT_EQ((*reopened)->append(6, 6, 6, event("c", 6)).id, 6u);
}

// A power loss can tear the old segment's tail (its sync runs after the
// rename): the sound records before the tear are kept, the file is left as
// it is, and the current segment still loads.
TEST(HistoryStoreTest, ATornOldSegmentKeepsItsSoundRecords) {
  testing::TempDir dir("history-old-torn");
  HistoryOptions o = options_in(dir, 3);
  {
    auto s = HistoryStore::open(o);
    ASSERT_TRUE(s);
    append_numbered(**s, 4);
  }
  const auto old_size = std::filesystem::file_size(o.path + ".old");
  std::filesystem::resize_file(o.path + ".old", old_size - 2);
  o.max_entries = 10;
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s) << s.status().to_string();
  EXPECT_EQ((*s)->dropped_at_open(), 1u);
  const auto all = (*s)->query(false, "", 10);
  ASSERT_EQ(all.size(), 3u);  // ids 1, 2 (old, 3 torn) and 4 (current)
  EXPECT_EQ(all[0].id, 4u);
  EXPECT_EQ(all[1].id, 2u);
  EXPECT_EQ(all[2].id, 1u);
  EXPECT_EQ(std::filesystem::file_size(o.path + ".old"), old_size - 2);
  EXPECT_EQ((*s)->append(5, 5, 5, event("a", 5)).id, 5u);
}

// A rename that fails (here: a directory where the old segment goes) is
// counted, the records still reach the current file, and the switch happens
// once it can.
TEST(HistoryStoreTest, AFailedSwitchIsCountedAndRetried) {
  testing::TempDir dir("history-rotate-fail");
  HistoryOptions o = options_in(dir, 2);
  std::filesystem::create_directories(o.path + ".old/blocker");
  auto s = HistoryStore::open(o);
  ASSERT_TRUE(s);
  append_numbered(**s, 4);
  EXPECT_GE((*s)->write_errors(), 1u);
  std::filesystem::remove_all(o.path + ".old");
  const auto errors = (*s)->write_errors();
  (*s)->append(5, 5, 5, event("a", 5));
  EXPECT_EQ((*s)->write_errors(), errors);
  EXPECT_TRUE(std::filesystem::is_regular_file(o.path + ".old"));
  (*s)->flush();
  s->reset();
  o.max_entries = 10;
  auto reopened = HistoryStore::open(o);
  ASSERT_TRUE(reopened);
  EXPECT_EQ((*reopened)->size(), 5u);  // nothing was lost while the switch failed
}

// An old segment that is not a history file stops the open, naming it.
TEST(HistoryStoreTest, AForeignOldSegmentIsRefused) {
  testing::TempDir dir("history-old-foreign");
  HistoryOptions o;
  o.path = dir.file("history.log");
  std::ofstream(o.path + ".old") << "not a history file\n";
  auto s = HistoryStore::open(o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(s.status().message().find("history.log.old"), std::string::npos) << s.status().to_string();
}

TEST(HistoryStoreTest, ForeignFileIsRefused) {
  testing::TempDir dir("history-foreign");
  HistoryOptions o;
  o.path = dir.file("history.log");
  std::ofstream(o.path) << "not a history file";
  auto s = HistoryStore::open(o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), ErrorCode::kCorruption);
}

TEST(HistoryCodec, RoundTripAndRejectsGarbage) {
  HistoryRecord r;
  r.id = 9;
  r.wall_ms = 1'700'000'000'000;
  r.log_index = 4;
  r.log_ms = 77;
  r.event = event(std::string("\xff\x00", 2), 12);
  r.event.hold_ms = 0;
  auto back = decode_history_record(encode_history_record(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, r);
  EXPECT_FALSE(decode_history_record("\x01"));
  std::string bad = encode_history_record(r);
  bad += "x";
  EXPECT_FALSE(decode_history_record(bad));
}

TEST(AuditCauseText, EveryCauseReadsBackFromItsText) {
  for (auto c = static_cast<std::uint8_t>(AuditCause::kAcquired); c <= kAuditCauseMax; ++c) {
    const auto cause = static_cast<AuditCause>(c);
    EXPECT_EQ(audit_cause_of(audit_cause_text(cause)), cause) << audit_cause_text(cause);
  }
  // "released" is a prefix of "released by another connection": the longer text wins.
  EXPECT_EQ(audit_cause_of("released by another connection"), AuditCause::kReleasedByOther);
  // An operator's revoke or kill names who asked; nothing else takes a suffix.
  EXPECT_EQ(audit_cause_of("revoked by alice"), AuditCause::kRevoked);
  EXPECT_EQ(audit_cause_of("session killed by ops@10.0.0.1"), AuditCause::kSessionKilled);
  EXPECT_EQ(audit_cause_of("released by bob"), AuditCause::kUnknown);
  EXPECT_EQ(audit_cause_of("revokedx"), AuditCause::kUnknown);
  EXPECT_EQ(audit_cause_of(""), AuditCause::kUnknown);
  EXPECT_EQ(audit_cause_of("a reason from a newer version"), AuditCause::kUnknown);
}

TEST(AuditCauseText, AHistoryRecordReadsBackItsCause) {
  HistoryRecord r;
  r.id = 3;
  r.event = event("L", 9);
  r.event.kind = AuditKind::kRevoke;
  r.event.cause = AuditCause::kRevoked;
  r.event.reason = "revoked by alice";
  auto back = decode_history_record(encode_history_record(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->event.cause, AuditCause::kRevoked);
  EXPECT_EQ(*back, r);
}

TEST(MetricsTextDeathTest, AReleaseWithAnotherKindsCauseStopsTheServer) {
  Metrics m;
  AuditEvent bad = event("L", 3);
  bad.kind = AuditKind::kRelease;  // cause kAcquired: EventDeriver never makes this
  EXPECT_DEATH(m.record(bad), "a release event with cause");
}

TEST(MetricsText, EveryMetricHasHelpAndCountsEvents) {
  Metrics m;
  AuditEvent g = event("L", 3);
  m.record(g);
  AuditEvent rel = g;
  rel.kind = AuditKind::kRelease;
  rel.cause = AuditCause::kReleased;
  rel.reason = "released";
  rel.hold_ms = 1500;
  m.record(rel);
  AuditEvent other = rel;
  other.cause = AuditCause::kReleasedByOther;
  other.reason = "released by another connection";
  other.hold_ms = -1;  // not in the hold histogram, whose count the test checks below
  m.record(other);
  m.observe_commit(3, std::chrono::milliseconds(2), true, false);
  m.observe_fsync(std::chrono::milliseconds(1));
  MetricsView v;
  v.primary = true;
  v.long_held_locks = 2;
  const std::string text = m.render(v);
  EXPECT_NE(text.find("leasehold_grants_total{reason=\"acquired\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("leasehold_releases_total{reason=\"released\"} 1"), std::string::npos);
  // A release by another connection is its own reason, not a compat key's replacement.
  EXPECT_NE(text.find("leasehold_releases_total{reason=\"released_by_other\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("leasehold_releases_total{reason=\"compat_replaced\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("leasehold_hold_seconds_count 1"), std::string::npos);
  EXPECT_NE(text.find("leasehold_commit_batch_commands_sum 3"), std::string::npos);
  EXPECT_NE(text.find("leasehold_long_held_locks 2"), std::string::npos);
  EXPECT_NE(text.find("leasehold_role{role=\"primary\"} 1"), std::string::npos);
  // Every family has a HELP line.
  std::size_t types = 0, helps = 0;
  for (std::size_t p = text.find("# TYPE"); p != std::string::npos; p = text.find("# TYPE", p + 1)) ++types;
  for (std::size_t p = text.find("# HELP"); p != std::string::npos; p = text.find("# HELP", p + 1)) ++helps;
  EXPECT_EQ(types, helps);
  EXPECT_GT(types, 25u);
}

}  // namespace
}  // namespace leasehold::server
