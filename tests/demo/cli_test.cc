// `leasehold demo pause` as a real process: against the fixture's PostgreSQL
// (--pg), with a private PostgreSQL it starts and removes itself, and its
// usage/unreachable exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdio>

#include "tests/fence/pg_test_support.h"
#include "testkit/net.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::demo {
namespace {

using leasehold::testing::Subprocess;
using leasehold::testing::TempDir;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

RunResult run_demo(std::vector<std::string> args, std::chrono::seconds timeout) {
  TempDir dir("demo-cli");
  // `env -u`: the demo must not pick up a conninfo from the test's environment.
  std::vector<std::string> argv = {"env", "-u", "LEASEHOLD_PG_CONNINFO",
                                   leasehold::testing::leasehold_binary(), "demo", "pause"};
  argv.insert(argv.end(), args.begin(), args.end());
  leasehold::testing::SpawnOptions so;
  so.stdout_path = dir.file("out");
  so.stderr_path = dir.file("err");
  auto p = Subprocess::spawn(argv, so);
  RunResult r;
  if (!p) {
    ADD_FAILURE() << p.status().to_string();
    return r;
  }
  auto code = p->wait(timeout);
  EXPECT_TRUE(code.has_value()) << "demo did not finish in time";
  r.exit_code = code.value_or(-1);
  r.out = leasehold::testing::read_file(dir.file("out"));
  r.err = leasehold::testing::read_file(dir.file("err"));
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The text between `before` and the next `until` ("" if absent). (No
// std::regex: GCC 12 warns inside it under the sanitizer build.)
std::string between(const std::string& text, const std::string& before, char until) {
  const auto at = text.find(before);
  if (at == std::string::npos) return "";
  const auto start = at + before.size();
  const auto end = text.find(until, start);
  return end == std::string::npos ? "" : text.substr(start, end - start);
}

// Both verdicts, and a stale token lower than the one the resource has seen.
void expect_both_outcomes(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "VERDICT unfenced: CORRUPTED (stale writer A overwrote B)"));
  EXPECT_TRUE(contains(r.out, "VERDICT fenced: SAFE (stale write rejected)"));
  EXPECT_TRUE(contains(r.out, "FROZEN by SIGSTOP"));
  unsigned long long stale = 0, seen = 0;
  const std::string rejected = between(r.out, "A       write REJECTED stale token ", '(');
  ASSERT_EQ(std::sscanf(rejected.c_str(), "%llu < %llu", &stale, &seen), 2) << rejected;
  EXPECT_LT(stale, seen);
  EXPECT_TRUE(contains(r.out, "A       write LANDED: ledger = 'billing job-42 result computed by worker A"));
}

TEST(PauseDemoCli, BothOutcomesAgainstPostgres) {
  const std::string conninfo = fence::testing::pg_conninfo();
  ASSERT_FALSE(conninfo.empty()) << "run through ctest (fixture `postgres`)";
  RunResult r = run_demo({"--pg", conninfo}, std::chrono::seconds(60));
  SCOPED_TRACE(r.out + r.err);
  expect_both_outcomes(r);
  EXPECT_TRUE(contains(r.out, "resource: PostgreSQL row"));
  EXPECT_TRUE(contains(r.out, "fenced_exec"));
}

TEST(PauseDemoCli, StartsAndRemovesItsOwnPostgres) {
  if (!std::filesystem::exists("/usr/lib/postgresql/15/bin/initdb")) GTEST_SKIP() << "no PostgreSQL 15";
  RunResult r = run_demo({}, std::chrono::seconds(90));
  SCOPED_TRACE(r.out + r.err);
  expect_both_outcomes(r);
  const std::string cluster = between(r.out, "private PostgreSQL on ", ')');
  ASSERT_TRUE(contains(cluster, "(cluster in /tmp/leasehold-demo-pg.")) << cluster;
  EXPECT_FALSE(std::filesystem::exists(between(cluster + ")", "(cluster in ", ',')))
      << "cluster dir left behind";
  const std::string data = between(r.out, "private leasehold server on ", ')');
  ASSERT_TRUE(contains(data, "(data in /tmp/leasehold-demo-server.")) << data;
  EXPECT_FALSE(std::filesystem::exists(between(data + ")", "(data in ", ',')))
      << "server data left behind";
}

TEST(PauseDemoCli, PauseNotLongerThanTtlIsAUsageError) {
  RunResult r = run_demo({"--ttl", "2s", "--pause", "1s", "--resource", "file"}, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 64);
  EXPECT_TRUE(contains(r.err, "--pause must be longer than --ttl")) << r.err;
  RunResult bad = run_demo({"--resource", "redis"}, std::chrono::seconds(20));
  EXPECT_EQ(bad.exit_code, 64) << bad.err;
}

TEST(PauseDemoCli, UnreachableServerExits69) {
  const std::uint16_t port = leasehold::testing::free_port();
  RunResult r = run_demo({"--endpoints", "127.0.0.1:" + std::to_string(port), "--resource", "file"},
                         std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 69) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "leasehold demo pause:")) << r.err;
}

TEST(PauseDemoCli, UnreachablePostgresExits69) {
  const std::uint16_t port = leasehold::testing::free_port();
  RunResult r = run_demo({"--pg", "host=127.0.0.1 port=" + std::to_string(port) +
                                      " user=postgres dbname=postgres connect_timeout=2"},
                         std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 69) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "--pg: cannot connect to PostgreSQL")) << r.err;
}

}  // namespace
}  // namespace leasehold::demo
