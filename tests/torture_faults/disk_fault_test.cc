// DISK FAULTS: a real `leasehold server` under the LD_PRELOAD disk-fault
// shim. EIO on fsync or on write: the node stops taking writes with a clear
// error, does not resume by itself, and never acknowledges what is not
// durable. ENOSPC: writes are refused with a clear error; once space
// returns, a restart resumes with every acknowledged grant. A simulated
// power cut (leasehold-power-cut after kill -9) under concurrent load keeps
// every acknowledged grant, and tokens keep rising. A RocksDB write failing
// after the journal synced loses nothing; a failed lease-mode background
// write is followed by a quarantine even after a clean stop.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "testkit/eventually.h"
#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;

std::int64_t last_token(RespClient& c, const std::string& lock) {
  const Value info = c.call({"LOCK.INFO", lock});
  const auto t = field(info, "last_token");
  return t ? t->integer : -1;
}

class DiskFaultTest : public ::testing::Test {
 protected:
  TempDir dir_;
  ShimmedServer shimmed_{dir_};

  // A write refused after the fault: the error names the cause.
  void expect_writes_stopped(RespClient& c, const std::string& session, const std::string& cause) {
    const Value v = c.call({"LOCK.ACQUIRE", "after-fault", session});
    ASSERT_EQ(v.type, Type::kError) << "acknowledged a write the disk refused";
    EXPECT_NE(v.str.find(cause), std::string::npos) << v.str;
  }

  // Acquires L0..L<n-1> for `session`; the highest token (-1 after a failure).
  std::int64_t acquire_locks(RespClient& c, const std::string& session, int n) {
    std::int64_t highest = 0;
    for (int i = 0; i < n; ++i) {
      const Value t = c.call({"LOCK.ACQUIRE", "L" + std::to_string(i), session});
      if (t.type != Type::kInteger) {
        ADD_FAILURE() << "LOCK.ACQUIRE L" << i << ": " << t.str;
        return -1;
      }
      highest = std::max(highest, t.integer);
    }
    return highest;
  }

  // Restarts without faults after an unclean lease-mode stop: the node is
  // quarantined for at least `ttl` from now (INFO, and LOCK.ACQUIRE without
  // WAIT answers nil; both checked only while that much has not passed, so
  // a slow start cannot fail them), grants L0 no sooner, and above `highest`.
  void expect_quarantined_restart(std::int64_t highest, std::chrono::milliseconds ttl, const std::string& out) {
    const auto restarted = std::chrono::steady_clock::now();
    const auto within_ttl = [&] { return std::chrono::steady_clock::now() - restarted < ttl; };
    ASSERT_TRUE(shimmed_.start());
    RespClient c = shimmed_.server().client();
    const std::string s = open_session(c);  // outlives the quarantine without keepalives
    const std::string remaining = info_value(c, "log", "quarantine_remaining_ms").value_or("0");
    if (within_ttl()) {
      EXPECT_GT(std::stoll(remaining), 0) << out;
    }
    const Value free = c.call({"LOCK.ACQUIRE", "never-held", s});  // a lock nobody held
    if (within_ttl()) {
      EXPECT_EQ(free.type, Type::kNull) << free.str;
    }
    const Value t = c.call({"LOCK.ACQUIRE", "L0", s, "WAIT", "60000"}, scaled(60s));
    ASSERT_EQ(t.type, Type::kInteger) << t.str;
    EXPECT_GT(t.integer, highest) << out;
    EXPECT_GE(std::chrono::steady_clock::now() - restarted, ttl) << out;
  }

  // kill -9, power cut, restart without faults: `held` (lock -> token, or 0
  // for an acknowledged release) is all there, and the next token is above
  // `highest` and every token in `held`.
  void crash_cut_and_check(const std::map<std::string, std::int64_t>& held, const std::string& session,
                           std::int64_t highest = 0) {
    shimmed_.server().process().kill9();
    std::string out;
    ASSERT_EQ(shimmed_.power_cut(&out), 0) << out;
    shimmed_.set_faults("");
    ASSERT_TRUE(shimmed_.start());
    RespClient c = shimmed_.server().client();
    std::int64_t max_token = highest;
    for (const auto& [lock, token] : held) {
      if (token == 0) {  // nobody else uses the lock: released means gone
        EXPECT_EQ(last_token(c, lock), -1) << "acknowledged release of " << lock << " lost\n" << out;
      } else {
        EXPECT_EQ(last_token(c, lock), token) << "acknowledged grant of " << lock << " lost\n" << out;
      }
      max_token = std::max(max_token, token);
    }
    const Value next = c.call({"LOCK.ACQUIRE", "after-restart", session});
    ASSERT_EQ(next.type, Type::kInteger) << next.str;
    EXPECT_GT(next.integer, max_token);
  }
};

TEST_F(DiskFaultTest, EioOnFsyncStopsWritesForGood) {
  ASSERT_TRUE(shimmed_.start());
  RespClient c = shimmed_.server().client();
  const std::string s = open_session(c);
  const Value before = c.call({"LOCK.ACQUIRE", "before", s});
  ASSERT_EQ(before.type, Type::kInteger);
  shimmed_.set_faults("eio-fsync");
  expect_writes_stopped(c, s, "Input/output error");
  shimmed_.set_faults("");  // the disk "recovers": the node must not pretend
  expect_writes_stopped(c, s, "node stopped");
  EXPECT_EQ(last_token(c, "before"), before.integer);  // reads still served
  EXPECT_EQ(last_token(c, "after-fault"), -1);
  crash_cut_and_check({{"before", before.integer}}, s);
}

TEST_F(DiskFaultTest, EioOnWriteStopsWrites) {
  ASSERT_TRUE(shimmed_.start());
  RespClient c = shimmed_.server().client();
  const std::string s = open_session(c);
  const Value before = c.call({"LOCK.ACQUIRE", "before", s});
  ASSERT_EQ(before.type, Type::kInteger);
  shimmed_.set_faults("eio-write");
  expect_writes_stopped(c, s, "Input/output error");
  shimmed_.set_faults("");
  expect_writes_stopped(c, s, "node stopped");
  crash_cut_and_check({{"before", before.integer}}, s);
}

TEST_F(DiskFaultTest, ARocksDbWriteFailingAfterTheJournalSyncedStopsWritesAndLosesNothing) {
  // The log writes an entry to its journal (pwrite + fdatasync), then puts
  // it into RocksDB without a sync (log/rocksdb_log.h). Here only RocksDB's
  // files fail: the entry is durable in the journal, but its put fails. The
  // client must hear "outcome unknown", the node must stop taking writes,
  // and neither a clean stop (which must not empty the journal) nor a
  // crash with a power cut may lose an acknowledged entry; the journal's
  // copy of the failed one is written back at the restart.
  ASSERT_TRUE(shimmed_.start());
  RespClient c = shimmed_.server().client();
  const std::string s = open_session(c);
  std::map<std::string, std::int64_t> held;
  std::int64_t highest = 0;
  for (int i = 0; i < 20; ++i) {  // acknowledged, most only in the journal and RocksDB's unsynced WAL
    const std::string lock = "before-" + std::to_string(i);
    const Value v = c.call({"LOCK.ACQUIRE", lock, s});
    ASSERT_EQ(v.type, Type::kInteger) << v.str;
    held[lock] = v.integer;
    highest = std::max(highest, v.integer);
  }
  shimmed_.set_faults("eio-write only:rocksdb/");
  const Value failed = c.call({"LOCK.ACQUIRE", "during-fault", s});
  ASSERT_EQ(failed.type, Type::kError) << "acknowledged a write RocksDB refused";
  EXPECT_NE(failed.str.find("Input/output error"), std::string::npos) << failed.str;
  EXPECT_NE(failed.str.find("outcome unknown"), std::string::npos) << failed.str;
  shimmed_.set_faults("");
  expect_writes_stopped(c, s, "node stopped");
  EXPECT_EQ(last_token(c, "during-fault"), -1);  // never applied in memory
  // A clean stop after the failure, then a crash and a power cut.
  ASSERT_TRUE(shimmed_.server().stop().has_value());
  ASSERT_TRUE(shimmed_.start());
  {
    RespClient again = shimmed_.server().client();
    for (const auto& [lock, token] : held) EXPECT_EQ(last_token(again, lock), token) << lock;
    // The journal held it: written back, under the token it was to get.
    EXPECT_GT(last_token(again, "during-fault"), highest);
    highest = std::max(highest, last_token(again, "during-fault"));
  }
  held["during-fault"] = highest;
  crash_cut_and_check(held, s, highest);
}

TEST_F(DiskFaultTest, DiskFullRefusesWritesAndARestartResumesOnceSpaceReturns) {
  ASSERT_TRUE(shimmed_.start());
  RespClient c = shimmed_.server().client();
  const std::string s = open_session(c);
  const Value before = c.call({"LOCK.ACQUIRE", "before", s});
  ASSERT_EQ(before.type, Type::kInteger);
  shimmed_.set_faults("enospc");
  expect_writes_stopped(c, s, "No space left on device");
  // Regression: RocksDB's background recovery then wrote its LOG file on
  // the full disk and its file logger aborted the server. It stays up.
  EXPECT_FALSE(eventually([&] { return !shimmed_.server().process().running(); }, 2s))
      << "the server died on a full disk";
  shimmed_.set_faults("");  // space returns
  expect_writes_stopped(c, s, "node stopped");  // documented: a restart resumes
  ASSERT_TRUE(shimmed_.server().stop().has_value());
  ASSERT_TRUE(shimmed_.start());
  RespClient again = shimmed_.server().client();
  EXPECT_EQ(last_token(again, "before"), before.integer);
  const Value next = again.call({"LOCK.ACQUIRE", "after-space", s});
  ASSERT_EQ(next.type, Type::kInteger) << next.str;
  EXPECT_GT(next.integer, before.integer);
}

TEST_F(DiskFaultTest, PowerCutUnderLoadKeepsEveryAcknowledgedGrantAndRelease) {
  ASSERT_TRUE(shimmed_.start());
  RespClient setup = shimmed_.server().client();
  const std::string s = open_session(setup);
  std::mutex mu;
  std::map<std::string, std::int64_t> acked;  // lock -> token held, 0 released
  std::int64_t highest = 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      auto c = RespClient::connect(shimmed_.server().port());
      if (!c) return;
      for (int k = 0; !stop.load(); ++k) {
        const std::string lock = "w" + std::to_string(w) + "-" + std::to_string(k);
        const Value v = c->call({"LOCK.ACQUIRE", lock, s}, 10s);
        if (v.type != Type::kInteger) return;  // the crash (or a bug: checked below)
        {
          std::lock_guard lock_guard(mu);
          acked[lock] = v.integer;
          highest = std::max(highest, v.integer);
        }
        if (k % 2 == 1) {
          {
            std::lock_guard lock_guard(mu);
            acked.erase(lock);  // in flight: the restart may show it held or released
          }
          const Value r = c->call({"LOCK.RELEASE", lock, s, std::to_string(v.integer)}, 10s);
          if (r != Value::simple("OK")) return;
          std::lock_guard lock_guard(mu);
          acked[lock] = 0;
        }
      }
    });
  }
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return acked.size() >= 60;
  }, 60s));
  shimmed_.server().process().kill9();  // mid-load: some requests in flight
  stop = true;
  for (auto& t : workers) t.join();
  crash_cut_and_check(acked, s, highest);
}

TEST_F(DiskFaultTest, LeaseModePowerCutLosesAcksButNoTokenAndQuarantines) {
  // --durability lease answers before fsync: a power cut may lose what was
  // acknowledged, and the revision guard must then keep tokens above every
  // one handed out and grant nothing for the longest TTL (plus drift).
  ASSERT_TRUE(shimmed_.start({"--durability", "lease"}));
  constexpr int kTtlMs = 3000;
  std::int64_t highest = 0;
  {
    RespClient c = shimmed_.server().client();
    highest = acquire_locks(c, open_session(c, kTtlMs), 50);
    ASSERT_GT(highest, 0);
  }
  shimmed_.server().process().kill9();
  std::string out;
  ASSERT_EQ(shimmed_.power_cut(&out), 0) << out;
  expect_quarantined_restart(highest, std::chrono::milliseconds(kTtlMs), out);
}

TEST_F(DiskFaultTest, LeaseModeWriteFailureThenACleanStopStillQuarantines) {
  // --durability lease answers first and writes behind. When a background
  // write fails, what it carried was acknowledged and may be lost, so even
  // a clean SIGTERM afterwards must not mark the data dir clean: the next
  // start quarantines for the longest TTL and starts above every token.
  ASSERT_TRUE(shimmed_.start({"--durability", "lease"}));
  constexpr int kTtlMs = 3000;
  std::int64_t highest = 0;
  {
    RespClient c = shimmed_.server().client();
    const std::string s = open_session(c, kTtlMs);
    highest = acquire_locks(c, s, 10);
    ASSERT_GT(highest, 0);
    shimmed_.set_faults("eio-fsync");
    // Answered at once; its background write fails.
    const Value during = c.call({"LOCK.ACQUIRE", "during-fault", s});
    ASSERT_EQ(during.type, Type::kInteger) << during.str;
    highest = std::max(highest, during.integer);
    EXPECT_TRUE(eventually([&] { return !info_value(c, "log", "node_failure").value_or("").empty(); }, 30s))
        << "the failed background write did not stop the node";
  }
  // The disk "recovers", then SIGTERM: the clean path, which could now
  // write a clean mark.
  shimmed_.set_faults("");
  ASSERT_TRUE(shimmed_.server().stop().has_value());
  std::string out;
  ASSERT_EQ(shimmed_.power_cut(&out), 0) << out;  // the failed fsync's bytes never reached the disk
  expect_quarantined_restart(highest, std::chrono::milliseconds(kTtlMs), out);
}

TEST_F(DiskFaultTest, PowerCutDropsUnsyncedBytes) {
  // The tool itself, on a journal the shim wrote: bytes written after the
  // last fsync are gone, a file whose directory was never fsynced is gone.
  ASSERT_TRUE(shimmed_.start());
  RespClient c = shimmed_.server().client();
  const std::string s = open_session(c);
  ASSERT_EQ(c.call({"LOCK.ACQUIRE", "x", s}).type, Type::kInteger);
  shimmed_.server().process().kill9();
  // The log's journal: created, synced and renamed into place at start.
  const std::string unsynced = shimmed_.data_dir() + "/journal";
  ASSERT_TRUE(std::filesystem::exists(unsynced));
  const auto size = std::filesystem::file_size(unsynced);
  { std::ofstream(unsynced, std::ios::app) << std::string(100, 'z'); }  // never fsynced
  std::string out;
  ASSERT_EQ(shimmed_.power_cut(&out), 0);
  EXPECT_EQ(std::filesystem::file_size(unsynced), size) << out;
}

}  // namespace
}  // namespace leasehold::testing
