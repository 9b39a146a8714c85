// DurableFenceGate: restarts, other processes, damaged files, busy locks.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "leasehold/fence_durable.h"
#include "tests/fence/history_check.h"
#include "tests/fence/temp_dir.h"

namespace leasehold::fence {
namespace {

using testing::check_fence_history;
using testing::now_ns;
using testing::Op;
using testing::TempDir;

std::unique_ptr<DurableFenceGate> open_gate(const std::string& dir,
                                            DurableFenceGateOptions options = {}) {
  auto gate = DurableFenceGate::open(dir, options);
  EXPECT_TRUE(gate.is_ok()) << gate.status().to_string();
  return gate.is_ok() ? std::move(gate).value() : nullptr;
}

std::string key_file(const std::string& dir, std::string_view key) {
  return dir + "/" + *DurableFenceGate::file_name_for(key);
}

TEST(DurableFenceGate, SurvivesReopen) {
  TempDir tmp;
  const std::string dir = tmp.file("gate");
  {
    auto gate = open_gate(dir);
    ASSERT_TRUE(gate->admit("billing", 41)->admitted);
    ASSERT_TRUE(gate->admit("billing", 42)->admitted);
    ASSERT_TRUE(gate->admit("other", 7)->admitted);
  }
  auto gate = open_gate(dir);
  EXPECT_EQ(*gate->highest("billing"), std::optional<Token>(42));
  Admission stale = *gate->admit("billing", 41);
  EXPECT_FALSE(stale.admitted);
  EXPECT_EQ(stale.highest, 42u);
  EXPECT_TRUE(gate->admit("billing", 42)->admitted);
  EXPECT_EQ(*gate->highest("other"), std::optional<Token>(7));
}

TEST(DurableFenceGate, KeysBecomeSafeFileNames) {
  EXPECT_EQ(*DurableFenceGate::file_name_for("jobs/42"), "jobs%2F42.fence");
  EXPECT_EQ(*DurableFenceGate::file_name_for(".."), "%2E%2E.fence");
  EXPECT_EQ(*DurableFenceGate::file_name_for("A-z_0"), "A-z_0.fence");
  EXPECT_TRUE(DurableFenceGate::file_name_for(std::string(200, 'k')).is_ok());
  EXPECT_EQ(DurableFenceGate::file_name_for(std::string(201, 'k')).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(DurableFenceGate::file_name_for(std::string(67, '/')).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(DurableFenceGate, OpenRejectsAFileAsDirectory) {
  TempDir tmp;
  std::ofstream(tmp.file("plain")) << "x";
  auto gate = DurableFenceGate::open(tmp.file("plain"));
  ASSERT_FALSE(gate.is_ok());
  EXPECT_EQ(gate.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DurableFenceGate::open(tmp.file("no/such/parent")).status().code(), ErrorCode::kIoError);
}

TEST(DurableFenceGate, TornNewestRecordFallsBackToThePreviousOne) {
  TempDir tmp;
  auto gate = open_gate(tmp.path());
  ASSERT_TRUE(gate->admit("k", 5)->admitted);  // seq 1 -> slot at 4096
  ASSERT_TRUE(gate->admit("k", 7)->admitted);  // seq 2 -> slot at 0
  // Damage the newest slot as a torn write would: that admission was never
  // acknowledged, so the previous record is the truth.
  int fd = ::open(key_file(tmp.path(), "k").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "garbage!", 8, 8), 8);
  ::close(fd);
  EXPECT_EQ(*gate->highest("k"), std::optional<Token>(5));
  EXPECT_FALSE(gate->admit("k", 4)->admitted);
  EXPECT_TRUE(gate->admit("k", 6)->admitted);  // overwrites the damaged slot
  EXPECT_EQ(*gate->highest("k"), std::optional<Token>(6));
}

TEST(DurableFenceGate, UnreadableRecordRefusesEveryToken) {
  TempDir tmp;
  auto gate = open_gate(tmp.path());
  std::ofstream(key_file(tmp.path(), "k")) << "not a token record";
  Result<Admission> r = gate->admit("k", UINT64_MAX);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(gate->highest("k").status().code(), ErrorCode::kCorruption);
}

TEST(DurableFenceGate, EmptyFileFromACrashedCreatorMeansNoToken) {
  TempDir tmp;
  auto gate = open_gate(tmp.path());
  std::ofstream(key_file(tmp.path(), "k")).flush();
  EXPECT_EQ(*gate->highest("k"), std::nullopt);
  EXPECT_TRUE(gate->admit("k", 3)->admitted);
}

TEST(DurableFenceGate, BusyKeyTimesOutAndOtherKeysStillWork) {
  TempDir tmp;
  auto gate = open_gate(tmp.path(), DurableFenceGateOptions{std::chrono::milliseconds(50)});
  ASSERT_TRUE(gate->admit("busy", 1)->admitted);
  int fd = ::open(key_file(tmp.path(), "busy").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // another writer holds the key
  Result<Admission> r = gate->admit("busy", 2);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kTimedOut);
  EXPECT_TRUE(gate->admit("free", 1)->admitted);
  ::close(fd);
  EXPECT_TRUE(gate->admit("busy", 2)->admitted);
}

// Several processes admit random tokens on one key through their own gate
// objects; each child writes its history to a file the parent checks.
TEST(DurableFenceGate, RacingProcessesObeyTheFencingRule) {
  TempDir tmp;
  const std::string dir = tmp.file("gate");
  ASSERT_NE(open_gate(dir), nullptr);
  constexpr int kProcesses = 3;
  constexpr int kOpsPerProcess = 100;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto gate = DurableFenceGate::open(dir);
      if (!gate) ::_exit(2);
      std::mt19937_64 rng(77 + p);
      FILE* out = std::fopen(tmp.file("history-" + std::to_string(p)).c_str(), "w");
      if (out == nullptr) ::_exit(3);
      Token base = 0;
      for (int i = 0; i < kOpsPerProcess; ++i) {
        base += rng() % 6;
        Token token = base + rng() % 12;
        std::int64_t start = now_ns();
        Result<Admission> r = (*gate)->admit("shared", token);
        std::int64_t end = now_ns();
        if (!r) ::_exit(4);
        std::fprintf(out, "%lld %lld %llu %d %llu\n", static_cast<long long>(start),
                     static_cast<long long>(end), static_cast<unsigned long long>(token),
                     r->admitted ? 1 : 0, static_cast<unsigned long long>(r->highest));
      }
      std::fclose(out);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  std::vector<Op> history;
  Token max_presented = 0;
  for (int p = 0; p < kProcesses; ++p) {
    std::ifstream in(tmp.file("history-" + std::to_string(p)));
    Op op;
    int admitted = 0;
    while (in >> op.start_ns >> op.end_ns >> op.token >> admitted >> op.highest) {
      op.admitted = admitted != 0;
      max_presented = std::max(max_presented, op.token);
      history.push_back(op);
    }
  }
  ASSERT_EQ(history.size(), static_cast<std::size_t>(kProcesses * kOpsPerProcess));
  EXPECT_EQ(check_fence_history(history), "");
  EXPECT_EQ(*open_gate(dir)->highest("shared"), std::optional<Token>(max_presented));
}

}  // namespace
}  // namespace leasehold::fence
