// FencedFileWriter: stale writes, racing threads and processes, crashes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "leasehold/fence_file.h"
#include "tests/fence/history_check.h"
#include "tests/fence/temp_dir.h"
#include "testkit/eventually.h"

namespace leasehold::fence {
namespace {

using testing::check_fence_history;
using testing::now_ns;
using testing::Op;
using testing::read_whole_file;
using testing::TempDir;

// "token=<t>\n" then `size` filler bytes derived from t: a reader can tell a
// complete file from a torn or mixed one.
std::string make_content(Token token, std::size_t size) {
  std::string s = "token=" + std::to_string(token) + "\n";
  s.append(size, static_cast<char>('a' + token % 26));
  return s;
}

// The token a complete file was written with, or nullopt if the bytes are
// not exactly one writer's content.
std::optional<Token> content_token(const std::string& bytes, std::size_t size) {
  std::size_t nl = bytes.find('\n');
  if (bytes.rfind("token=", 0) != 0 || nl == std::string::npos) return std::nullopt;
  Result<Token> t = parse_token(std::string_view(bytes).substr(6, nl - 6));
  if (!t || bytes != make_content(*t, size)) return std::nullopt;
  return *t;
}

TEST(FencedFileWriter, StaleTokenDoesNotReplaceTheFile) {
  TempDir tmp;
  const std::string path = tmp.file("out.bin");
  FencedFileWriter writer;
  ASSERT_TRUE(writer.write(path, 33, "from 33").is_ok());
  EXPECT_EQ(read_whole_file(path), "from 33");
  ASSERT_TRUE(writer.write(path, 34, "from 34").is_ok());
  ASSERT_TRUE(writer.write(path, 34, "from 34 again").is_ok()) << "equal token: same holder";
  Status stale = writer.write(path, 33, "late write from 33");
  EXPECT_EQ(stale.code(), ErrorCode::kStaleToken);
  EXPECT_EQ(stale.message(), "stale token 33 for '" + path + "': highest admitted is 34");
  EXPECT_EQ(read_whole_file(path), "from 34 again");
  EXPECT_EQ(*writer.highest(path), std::optional<Token>(34));
  EXPECT_FALSE(std::filesystem::exists(FencedFileWriter::temp_path(path)));
}

TEST(FencedFileWriter, HighestOfAnUnwrittenPathIsNone) {
  TempDir tmp;
  EXPECT_EQ(*FencedFileWriter().highest(tmp.file("never")), std::nullopt);
}

TEST(FencedFileWriter, BadArgumentsChangeNothing) {
  TempDir tmp;
  FencedFileWriter writer(FencedFileWriterOptions{std::chrono::milliseconds(1000), 4});
  EXPECT_EQ(writer.write("", 1, "x").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(writer.write(tmp.path() + "/", 1, "x").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(writer.write(tmp.file("big"), 1, "12345").code(), ErrorCode::kLimitExceeded);
  EXPECT_FALSE(std::filesystem::exists(tmp.file("big")));
  EXPECT_FALSE(std::filesystem::exists(FencedFileWriter::fence_path(tmp.file("big"))));
  EXPECT_EQ(writer.write(tmp.file("no-dir/f"), 1, "x").code(), ErrorCode::kIoError);
}

TEST(FencedFileWriter, CrashLeftoversDoNotBreakLaterWrites) {
  TempDir tmp;
  const std::string path = tmp.file("report.csv");
  FencedFileWriter writer;
  // What a writer killed mid-way leaves: a half-written temp file and an
  // empty token file (created, never written).
  std::ofstream(FencedFileWriter::temp_path(path)) << "half a rep";
  std::ofstream(FencedFileWriter::fence_path(path)).flush();
  ASSERT_TRUE(writer.write(path, 9, "full report").is_ok());
  EXPECT_EQ(read_whole_file(path), "full report");
  EXPECT_FALSE(std::filesystem::exists(FencedFileWriter::temp_path(path)));
  // A leftover from a crash after the token was recorded but before rename.
  std::ofstream(FencedFileWriter::temp_path(path)) << "orphan";
  EXPECT_EQ(writer.write(path, 8, "stale").code(), ErrorCode::kStaleToken);
  ASSERT_TRUE(writer.write(path, 9, "retry by the same holder").is_ok());
  EXPECT_EQ(read_whole_file(path), "retry by the same holder");
}

TEST(FencedFileWriter, KilledWriterLeavesOldOrNewBytesAndLaterWritesWork) {
  TempDir tmp;
  const std::string path = tmp.file("data");
  constexpr std::size_t kSize = 256 * 1024;
  FencedFileWriter writer;
  ASSERT_TRUE(writer.write(path, 1, make_content(1, kSize)).is_ok());
  std::mt19937 rng(4242);
  for (int round = 0; round < 5; ++round) {
    const Token start = *writer.highest(path).value() + 1;
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      FencedFileWriter child;
      for (Token t = start; t < start + 100000; ++t) {
        if (!child.write(path, t, make_content(t, kSize)).is_ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    // Deliberate: the kill lands at a random moment of the child's writes
    // (seeded), which no condition can pick; the sleep is that moment.
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 40));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer finished before the kill; status " << status;
    std::optional<Token> on_disk = content_token(read_whole_file(path), kSize);
    ASSERT_TRUE(on_disk.has_value()) << "file is torn after kill -9 in round " << round;
    const Token highest = *writer.highest(path).value();
    EXPECT_LE(*on_disk, highest) << "bytes must never be newer than the recorded token";
    EXPECT_GE(*on_disk + 1, highest) << "at most the one interrupted write is lost";
    ASSERT_TRUE(writer.write(path, highest + 1, make_content(highest + 1, kSize)).is_ok());
    EXPECT_EQ(content_token(read_whole_file(path), kSize), std::optional<Token>(highest + 1));
  }
}

// Writers present interleaved rising tokens; the history of admitted writes
// must be monotonic in real time, every stale write must have been beaten by
// a higher admitted token, the final bytes belong to the highest token, and a
// concurrent reader never sees a torn file.
void check_race(const std::vector<Op>& ops, const std::string& path, std::size_t size) {
  std::vector<Op> admitted;
  Token max_admitted = 0;
  for (const Op& op : ops) {
    if (op.admitted) {
      admitted.push_back(op);
      max_admitted = std::max(max_admitted, op.token);
    }
  }
  EXPECT_EQ(check_fence_history(admitted), "");
  EXPECT_LT(admitted.size(), ops.size()) << "the race should produce some stale writes";
  for (const Op& op : ops) {
    if (op.admitted) continue;
    bool beaten = false;
    for (const Op& a : admitted) beaten |= a.token > op.token && a.start_ns < op.end_ns;
    EXPECT_TRUE(beaten) << "token " << op.token << " refused without a higher admitted token";
  }
  EXPECT_EQ(content_token(read_whole_file(path), size), std::optional<Token>(max_admitted));
  EXPECT_EQ(*FencedFileWriter().highest(path), std::optional<Token>(max_admitted));
}

std::vector<Op> run_writer(const std::string& path, unsigned seed, int writes, std::size_t size) {
  FencedFileWriter writer;
  std::mt19937_64 rng(seed);
  std::vector<Op> ops;
  Token base = 0;
  for (int i = 0; i < writes; ++i) {
    base += rng() % 4;
    Op op;
    op.token = base + rng() % 8;
    op.start_ns = now_ns();
    Status s = writer.write(path, op.token, make_content(op.token, size));
    op.end_ns = now_ns();
    if (!s.is_ok() && s.code() != ErrorCode::kStaleToken) {
      ADD_FAILURE() << s.to_string();
      break;
    }
    op.admitted = s.is_ok();
    op.highest = op.token;
    ops.push_back(op);
  }
  return ops;
}

TEST(FencedFileWriter, RacingThreads) {
  TempDir tmp;
  const std::string path = tmp.file("shared");
  constexpr std::size_t kSize = 4096;
  std::mutex mu;
  std::vector<Op> all;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Op> ops = run_writer(path, 10 + t, 100, kSize);
      std::lock_guard lock(mu);
      all.insert(all.end(), ops.begin(), ops.end());
    });
  }
  for (auto& th : threads) th.join();
  check_race(all, path, kSize);
}

TEST(FencedFileWriter, RacingProcessesWithAConcurrentReader) {
  TempDir tmp;
  const std::string path = tmp.file("shared");
  constexpr std::size_t kSize = 64 * 1024;
  constexpr int kWriters = 2;
  constexpr int kWrites = 100;
  std::vector<pid_t> children;
  for (int p = 0; p < kWriters; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<Op> ops = run_writer(path, 500 + p, kWrites, kSize);
      FILE* out = std::fopen(tmp.file("history-" + std::to_string(p)).c_str(), "w");
      if (out == nullptr || ops.size() != kWrites) ::_exit(2);
      for (const Op& op : ops) {
        std::fprintf(out, "%lld %lld %llu %d\n", static_cast<long long>(op.start_ns),
                     static_cast<long long>(op.end_ns), static_cast<unsigned long long>(op.token),
                     op.admitted ? 1 : 0);
      }
      std::fclose(out);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  // Read while they write: every read is one writer's complete content.
  int reads = 0;
  std::vector<pid_t> running = children;
  const bool all_done = leasehold::testing::eventually([&] {
    if (std::filesystem::exists(path)) {
      std::string bytes = read_whole_file(path);
      EXPECT_TRUE(content_token(bytes, kSize).has_value()) << "torn read of " << bytes.size();
      ++reads;
    }
    std::erase_if(running, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
    return running.empty();
  }, std::chrono::seconds(60), std::chrono::milliseconds(0));
  EXPECT_TRUE(all_done) << running.size() << " writers still running";
  for (pid_t pid : running) ::kill(pid, SIGKILL);  // only if the deadline passed
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  std::vector<Op> all;
  for (int p = 0; p < kWriters; ++p) {
    std::ifstream in(tmp.file("history-" + std::to_string(p)));
    Op op;
    int admitted = 0;
    while (in >> op.start_ns >> op.end_ns >> op.token >> admitted) {
      op.admitted = admitted != 0;
      op.highest = op.token;
      all.push_back(op);
    }
  }
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kWriters * kWrites));
  EXPECT_GT(reads, 0);
  check_race(all, path, kSize);
}

}  // namespace
}  // namespace leasehold::fence
