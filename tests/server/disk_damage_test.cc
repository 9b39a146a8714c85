// DISK DAMAGE: fencing tokens never go backwards, whatever happened to the
// data dir. A clean stop, then the RocksDB WAL truncated to 0 or to half
// (the log's journal names the lost entries), the log deleted (the revision
// record does), an old log restored under a newer snapshot, the revision
// record deleted or damaged: each start is refused with a message that names
// the file and the missing range, or recovers (--recover-lost-log) with
// tokens above every token handed out before, every session expired, and no
// grant until the longest TTL in use has passed. Plus kill -9 (an unclean
// stop): tokens continue above the reserved block, across several blocks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "log/revision_record.h"
#include "testkit/server_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using resp::Type;
using resp::Value;

// Sessions before the damage use this TTL; the recovery quarantine is this
// plus the drift bound.
constexpr std::int64_t kTtlMs = 4000;

class DiskDamage : public ::testing::Test {
 protected:
  std::string data() const { return dir_.file("data"); }

  void start(const std::vector<std::string>& flags = {}) {
    server_ = ServerProcess();
    started_ = std::chrono::steady_clock::now();
    ASSERT_TRUE(server_.start(data(), flags));
  }
  void stop_cleanly() { ASSERT_EQ(server_.stop(), std::optional<int>(0)); }

  // Opens a session, then acquires and releases `rounds` distinct locks and
  // finally holds `last` (the old session may still hold an earlier one).
  // Returns the highest token handed out.
  std::int64_t make_history(int rounds, const std::string& last = "lk12") {
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", std::to_string(kTtlMs)});
    EXPECT_EQ(s.type, Type::kInteger) << s.debug_string();
    const std::string session = std::to_string(s.integer);
    std::int64_t high = 0;
    for (int i = 0; i < rounds; ++i) {
      const std::string lock = "lk" + std::to_string(i % 7);
      const Value t = c.call({"LOCK.ACQUIRE", lock, session});
      EXPECT_EQ(t.type, Type::kInteger) << t.debug_string();
      high = std::max(high, t.integer);
      EXPECT_EQ(c.call({"LOCK.RELEASE", lock, session, std::to_string(t.integer)}), Value::simple("OK"));
      // Kept alive by hand: on a loaded machine the rounds can outlast the TTL.
      EXPECT_EQ(c.call({"SESSION.KEEPALIVE", session}).type, Type::kInteger);
    }
    const Value t = c.call({"LOCK.ACQUIRE", last, session});
    EXPECT_EQ(t.type, Type::kInteger) << t.debug_string();
    return std::max(high, t.integer);
  }

  std::vector<fs::path> wal_files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(data() + "/rocksdb")) {
      if (e.path().extension() == ".log") out.push_back(e.path());
    }
    return out;
  }

  // After a recovery: the quarantine holds (no grant, also not on a new
  // lock), then (with `wait_out`) lk12 is granted with a token above `above`.
  void expect_recovered_above(std::int64_t above, bool wait_out = true) {
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
    EXPECT_GT(s.integer, above);  // session ids are revisions too
    const std::string session = std::to_string(s.integer);
    EXPECT_EQ(c.call({"LOCK.ACQUIRE", "lk12", session}).type, Type::kNull) << "granted during the quarantine";
    EXPECT_EQ(c.call({"LOCK.ACQUIRE", "brand-new", session}).type, Type::kNull) << "granted during the quarantine";
    const Value info = c.call({"INFO", "log"});
    const auto at = info.str.find("quarantine_remaining_ms:");
    ASSERT_NE(at, std::string::npos) << info.str;
    EXPECT_GT(std::stoll(info.str.substr(at + std::string("quarantine_remaining_ms:").size())), 0) << info.str;
    if (!wait_out) return;
    // A WAIT queues until the quarantine ends (about kTtlMs after the start).
    const Value t = c.call({"LOCK.ACQUIRE", "lk12", session, "WAIT", "60000"}, 60s);
    ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
    EXPECT_GT(t.integer, above);
    // The grant came no earlier than the quarantine allows: it began once
    // the server opened its data dir, after start() began.
    EXPECT_GE(std::chrono::steady_clock::now() - started_, std::chrono::milliseconds(kTtlMs));
  }

  TempDir dir_{"disk-damage"};
  ServerProcess server_;
  std::chrono::steady_clock::time_point started_;  // the last start() began
};

TEST_F(DiskDamage, WalTruncatedToZeroIsRefusedThenRecoveredAboveEveryToken) {
  start();
  const std::int64_t high = make_history(20);
  stop_cleanly();
  for (const fs::path& wal : wal_files()) fs::resize_file(wal, 0);

  // The journal (emptied by the clean stop) says which entries were durable.
  auto refused = server_.run_to_exit(data());
  ASSERT_TRUE(refused) << "the server started on a log that lost data";
  EXPECT_NE(refused->code, 0);
  EXPECT_NE(refused->stderr_text.find("the log lost entries 1.."), std::string::npos) << refused->stderr_text;
  EXPECT_NE(refused->stderr_text.find("/journal"), std::string::npos) << refused->stderr_text;
  EXPECT_NE(refused->stderr_text.find("--recover-lost-log"), std::string::npos) << refused->stderr_text;

  start({"--recover-lost-log"});
  expect_recovered_above(high);
}

TEST_F(DiskDamage, WalTruncatedToHalfIsRefused) {
  start();
  const std::int64_t high = make_history(300);
  stop_cleanly();
  for (const fs::path& wal : wal_files()) fs::resize_file(wal, fs::file_size(wal) / 2);
  auto refused = server_.run_to_exit(data());
  ASSERT_TRUE(refused) << "the server started on a half log";
  EXPECT_NE(refused->code, 0);
  // RocksDB itself, the journal or the revision record notices the loss;
  // each way the start is refused with a message naming what is wrong.
  const bool named = refused->stderr_text.find("revision-record") != std::string::npos ||
                     refused->stderr_text.find("rocksdb") != std::string::npos ||
                     refused->stderr_text.find("journal") != std::string::npos;
  EXPECT_TRUE(named) << refused->stderr_text;
  start({"--recover-lost-log"});
  expect_recovered_above(high);
}

TEST_F(DiskDamage, DeletedLogIsRefused) {
  start();
  const std::int64_t high = make_history(20);
  stop_cleanly();
  // All of the log, journal included: the revision record still knows.
  fs::remove_all(data() + "/rocksdb");
  fs::remove(data() + "/journal");
  auto refused = server_.run_to_exit(data());
  ASSERT_TRUE(refused) << "the server started without its log";
  EXPECT_NE(refused->code, 0);
  EXPECT_NE(refused->stderr_text.find("revisions 1.."), std::string::npos) << refused->stderr_text;
  start({"--recover-lost-log"});
  expect_recovered_above(high);
}

TEST_F(DiskDamage, OldLogUnderANewerSnapshotIsRefused) {
  start({"--snapshot-every-commands", "50"});
  make_history(10);
  stop_cleanly();
  fs::copy(data() + "/rocksdb", dir_.file("old-rocksdb"), fs::copy_options::recursive);
  start({"--snapshot-every-commands", "50"});
  const std::int64_t high = make_history(120, "lk13");  // snapshots, then more entries after the last
  stop_cleanly();
  bool has_snapshot = false;
  for (const auto& e : fs::directory_iterator(data())) {
    has_snapshot |= e.path().filename().string().starts_with("snapshot-");
  }
  ASSERT_TRUE(has_snapshot);
  fs::remove_all(data() + "/rocksdb");
  fs::copy(dir_.file("old-rocksdb"), data() + "/rocksdb", fs::copy_options::recursive);
  auto refused = server_.run_to_exit(data());
  ASSERT_TRUE(refused) << "the server started on an old log";
  EXPECT_NE(refused->code, 0);
  // Refused by the log's own continuity check or by the revision record;
  // either way the message names the data that is missing.
  EXPECT_TRUE(refused->stderr_text.find("missing") != std::string::npos ||
              refused->stderr_text.find("snapshot") != std::string::npos)
      << refused->stderr_text;
  start({"--recover-lost-log"});
  expect_recovered_above(high, /*wait_out=*/false);
}

TEST_F(DiskDamage, RecordCopiesMissingOrDamaged) {
  start();
  const std::int64_t high = make_history(20);
  stop_cleanly();
  const std::string a = log::revision_record_path_a(data()), b = log::revision_record_path_b(data());
  ASSERT_TRUE(fs::exists(a) && fs::exists(b));

  // One copy lost: the other one is enough (and both are rewritten before
  // the first append).
  fs::remove(a);
  start();
  {
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(s.type, Type::kInteger);
    EXPECT_GT(s.integer, high);
  }
  EXPECT_TRUE(fs::exists(a));
  stop_cleanly();

  // Both damaged: refused, naming both files.
  for (const std::string& path : {a, b}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "garbage";
  }
  auto refused = server_.run_to_exit(data());
  ASSERT_TRUE(refused) << "the server started without a valid revision record";
  EXPECT_NE(refused->code, 0);
  EXPECT_NE(refused->stderr_text.find("is damaged"), std::string::npos) << refused->stderr_text;
  EXPECT_NE(refused->stderr_text.find("--revision-floor"), std::string::npos) << refused->stderr_text;

  // Both missing: refused as well; --recover-lost-log alone is not enough.
  fs::remove(a);
  fs::remove(b);
  refused = server_.run_to_exit(data(), {"--recover-lost-log"});
  ASSERT_TRUE(refused) << "the server started without a revision record and without a floor";
  EXPECT_NE(refused->stderr_text.find("is missing"), std::string::npos) << refused->stderr_text;

  // With the operator's floor: revisions above it, and a quarantine of the
  // longest TTL allowed (no record says which TTLs were in use).
  const std::int64_t floor = high + 5000;
  start({"--recover-lost-log", "--revision-floor", std::to_string(floor)});
  expect_recovered_above(floor, /*wait_out=*/false);
}

// kill -9 is an unclean stop: the next start continues above the reserved
// block (tiny blocks here, so that the run crosses several of them).
TEST_F(DiskDamage, UncleanStopsContinueAboveTheReservedBlock) {
  const std::vector<std::string> flags = {"--revision-block", "16"};
  std::int64_t high = 0;
  for (int round = 0; round < 3; ++round) {
    start(flags);
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(s.type, Type::kInteger) << s.debug_string();
    EXPECT_GT(s.integer, high);
    const std::string session = std::to_string(s.integer);
    for (int i = 0; i < 40; ++i) {
      const Value t = c.call({"LOCK.ACQUIRE", "r" + std::to_string(round), session});
      ASSERT_EQ(t.type, Type::kInteger) << t.debug_string();
      EXPECT_GT(t.integer, high);
      high = t.integer;
      ASSERT_EQ(c.call({"LOCK.RELEASE", "r" + std::to_string(round), session, std::to_string(t.integer)}),
                Value::simple("OK"));
    }
    server_.process().kill9();
  }
  // A clean stop after an unclean one: the next start continues exactly.
  start(flags);
  std::int64_t before_clean = 0;
  {
    RespClient c = server_.client();
    const Value s = c.call({"SESSION.OPEN", "60000"});
    ASSERT_EQ(s.type, Type::kInteger);
    EXPECT_GT(s.integer, high);
    before_clean = s.integer;
  }
  stop_cleanly();
  start(flags);
  RespClient c = server_.client();
  const Value s = c.call({"SESSION.OPEN", "60000"});
  ASSERT_EQ(s.type, Type::kInteger);
  EXPECT_GT(s.integer, before_clean);
  EXPECT_LT(s.integer, before_clean + 16) << "a clean restart should not skip a block";
}

}  // namespace
}  // namespace leasehold::testing
