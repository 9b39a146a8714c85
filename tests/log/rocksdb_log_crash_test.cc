// kill -9 while appending: every acknowledged entry survives.
//
// The parent re-runs this test binary as a child (filter
// LogCrashChild.AppendUntilKilled, with LEASEHOLD_LOG_CRASH_DIR set). The
// child appends entries with sync and, after each append's callback reported
// success, writes the index to an ack file. The parent kills the child with
// SIGKILL at an arbitrary moment, reopens the log and checks that it holds
// every acknowledged index with the right payload and no gap. Several rounds
// continue the same log. (A process crash keeps the page cache; the ack file
// needs no fsync, and what we test is that an ack is only given after the
// write is in RocksDB's WAL.)
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <random>
#include <sstream>
#include <thread>

#include "log/rocksdb_log.h"
#include "tests/log/log_test_util.h"
#include "testkit/eventually.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::log {
namespace {

using testing::append_sync;
using testing::payload_for;
using testing::read_all;

constexpr const char* kDirEnv = "LEASEHOLD_LOG_CRASH_DIR";
constexpr const char* kAckEnv = "LEASEHOLD_LOG_CRASH_ACKS";

// Runs only as the child of LogCrash.AcknowledgedEntriesSurviveKillNine.
TEST(LogCrashChild, AppendUntilKilled) {
  const char* dir = std::getenv(kDirEnv);
  const char* acks = std::getenv(kAckEnv);
  if (dir == nullptr || acks == nullptr) GTEST_SKIP() << "runs only as a crash-test child";
  auto log = open_rocksdb_log({.dir = dir});
  ASSERT_TRUE(log.is_ok()) << log.status().to_string();
  const int fd = ::open(acks, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const leasehold::testing::ScaledDeadline stop_at(std::chrono::seconds(60));
  while (!stop_at.passed()) {  // bounded; the parent kills us long before
    const LogIndex next = (*log)->position().last + 1;
    auto r = append_sync(**log, payload_for(next));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(*r, next);
    const std::string line = std::to_string(*r) + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  ::close(fd);
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Complete lines only: the kill may cut a line in half.
LogIndex highest_ack(const std::string& text, std::size_t* count) {
  LogIndex highest = 0;
  *count = 0;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    highest = std::max<LogIndex>(highest, std::stoull(text.substr(start, nl - start)));
    ++*count;
    start = nl + 1;
  }
  return highest;
}

TEST(LogCrash, AcknowledgedEntriesSurviveKillNine) {
  leasehold::testing::TempDir dir("logcrash");
  const std::string log_dir = dir.file("log");
  std::mt19937 rng(20261129);
  LogIndex acked_so_far = 0;
  for (int round = 0; round < 4; ++round) {
    const std::string ack_path = dir.file("acks-" + std::to_string(round));
    leasehold::testing::SpawnOptions opt;
    opt.env = {{kDirEnv, log_dir}, {kAckEnv, ack_path}};
    opt.stdout_path = dir.file("child-" + std::to_string(round) + ".out");
    auto child = leasehold::testing::Subprocess::spawn(
        {self_exe(), "--gtest_filter=LogCrashChild.AppendUntilKilled"}, opt);
    ASSERT_TRUE(child.is_ok()) << child.status().to_string();
    // Let it acknowledge a random number of entries, then kill it mid-stream.
    const std::size_t want = 50 + rng() % 150;
    std::size_t count = 0;
    leasehold::testing::eventually([&] {
      highest_ack(leasehold::testing::read_file(ack_path), &count);
      return count >= want || !child->running();
    }, std::chrono::seconds(30), std::chrono::milliseconds(2));
    ASSERT_TRUE(child->running()) << "child exited early; see " << opt.stdout_path;
    ASSERT_GE(count, want) << "child too slow";
    // Deliberate: the kill lands at a random moment (seeded) of the
    // child's stream of appends, which no condition can pick.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    child->kill9();
    const LogIndex acked = highest_ack(leasehold::testing::read_file(ack_path), &count);
    ASSERT_GT(acked, acked_so_far);
    acked_so_far = acked;

    auto log = open_rocksdb_log({.dir = log_dir});
    ASSERT_TRUE(log.is_ok()) << "round " << round << ": " << log.status().to_string();
    EXPECT_GE((*log)->position().last, acked) << "round " << round << " lost acknowledged entries";
    auto entries = read_all(**log, 1);
    ASSERT_TRUE(entries.is_ok()) << entries.status().to_string();
    ASSERT_EQ(entries->size(), (*log)->position().last);
    for (const auto& [index, payload] : *entries) {
      ASSERT_EQ(payload, payload_for(index)) << "round " << round << " entry " << index;
    }
  }
}

}  // namespace
}  // namespace leasehold::log
