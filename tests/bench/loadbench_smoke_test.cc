// Smoke test of the load driver: runs build/bench/leasehold_loadbench for
// about a second per cell at C=2 against a private redis-server on a free
// port and checks that every workload produced a positive rate, so the
// driver cannot rot silently. Not a performance test: no rate is judged.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/load/lock_clients.h"
#include "bench/load/load_runner.h"
#include "tests/bench/private_server.h"
#include "testkit/net.h"
#include "testkit/resp_client.h"
#include "testkit/server_process.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {
namespace {

// A private redis-server without persistence.
PrivateServer private_redis(const TempDir& dir) {
  return PrivateServer(dir, "redis", [&dir](std::uint16_t port) {
    return std::vector<std::string>{"/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", std::to_string(port),
                                    "--dir", dir.path(), "--save", "", "--daemonize", "no"};
  }, std::chrono::seconds(10));
}

std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream fs(line);
    std::string field;
    while (std::getline(fs, field, ',')) fields.push_back(field);
    if (!line.empty() && line.back() == ',') fields.emplace_back();
    rows.push_back(std::move(fields));
  }
  return rows;
}

TEST(LoadBenchSmoke, DriverProducesNumbersAgainstRedis) {
  TempDir dir("loadbench");
  PrivateServer redis = private_redis(dir);
  ASSERT_TRUE(redis.ready()) << read_file(dir.file("redis.log"));

  SpawnOptions opt;
  opt.stdout_path = dir.file("out");
  opt.stderr_path = dir.file("err");
  auto driver = Subprocess::spawn(
      {build_dir() + "/bench/leasehold_loadbench", "--redis-default", loopback(redis.port()),
       "--clients", "2", "--duration-ms", "1000", "--warmup-ms", "100", "--spin-retry-us", "1000",
       "--w3-requests", "2000", "--csv", dir.file("results.csv"), "--ceiling-dir", dir.path(),
       "--ceiling-target", "redis-default"},
      opt);
  ASSERT_TRUE(driver.is_ok()) << driver.status().to_string();
  auto code = driver->wait(std::chrono::seconds(60));
  ASSERT_EQ(code, 0) << read_file(dir.file("out")) << read_file(dir.file("err"));

  auto rows = read_csv(read_file(dir.file("results.csv")));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0][0], "workload");
  std::map<std::string, double> rate;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 11u) << i;
    EXPECT_EQ(rows[i][1], "2");
    EXPECT_EQ(rows[i][2], "redis-default");
    EXPECT_EQ(rows[i][6], "") << "error in " << rows[i][0];
    rate[rows[i][0]] = std::stod(rows[i][3]);
    if (rows[i][0].rfind("W2", 0) == 0) {
      EXPECT_GT(std::stoull(rows[i][4]), 0u);  // max grants per client
      EXPECT_GT(std::stod(rows[i][9]), 0) << "hand-off p50";
      EXPECT_GE(std::stod(rows[i][10]), std::stod(rows[i][9])) << "hand-off p99 >= p50";
    }
    if (rows[i][0] == "W1") {
      EXPECT_GT(std::stod(rows[i][7]), 0) << "acquire p50";
      EXPECT_GE(std::stod(rows[i][8]), std::stod(rows[i][7])) << "acquire p99 >= p50";
    }
  }
  ASSERT_EQ(rate.size(), 3u) << read_file(dir.file("results.csv"));
  EXPECT_GT(rate["W1"], 0);
  EXPECT_GT(rate["W2 r=1ms"], 0);
  EXPECT_GT(rate["W3"], 0);
  // The human tables are printed too, with the ceiling measured in the run.
  std::string out = read_file(dir.file("out"));
  EXPECT_NE(out.find("redis-default"), std::string::npos) << out;
  EXPECT_NE(out.find("ceiling: W2 hand-off 1/(fsync+RTT) = "), std::string::npos) << out;
  EXPECT_NE(out.find("W1 acquire"), std::string::npos) << out;
}

// run_cell directly: W2 cycles add up and each client is accounted for.
TEST(LoadBenchSmoke, RunCellCountsPerClient) {
  TempDir dir("loadbench");
  PrivateServer redis = private_redis(dir);
  ASSERT_TRUE(redis.ready());
  bench::CellOptions o = short_cell(bench::System::kRedis, bench::Workload::kOneLock, redis.port(), 3,
                                    std::chrono::milliseconds(300), "bench");
  bench::CellResult r = bench::run_cell(o);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.per_client.size(), 3u);
  std::uint64_t sum = 0;
  for (auto n : r.per_client) sum += n;
  EXPECT_EQ(sum, r.total);
  EXPECT_GT(r.total, 0u);
  EXPECT_DOUBLE_EQ(r.ops_per_s, static_cast<double>(r.total) / 0.3);
}

// The pipelined leasehold client (RELEASE + next ACQUIRE in one write)
// against a real server: every W2 client is granted, W1 completes cycles,
// and when the cells end every pending grant was released and every session
// closed (nothing held, nothing waiting, no session left).
TEST(LoadBenchSmoke, PipelinedLeaseholdCellsHandOffAndLeaveNothingBehind) {
  TempDir dir("loadbench");
  ServerProcess server;
  ASSERT_TRUE(server.start(dir.file("data")));
  bench::CellOptions o = short_cell(bench::System::kLeasehold, bench::Workload::kOneLock, server.port(), 3,
                                    std::chrono::milliseconds(500), "pw2");
  o.pipeline = true;
  bench::CellResult w2 = bench::run_cell(o);
  ASSERT_TRUE(w2.ok()) << w2.error;
  EXPECT_GT(w2.min_per_client(), 0u) << "FIFO hand-off: every client is granted";
  EXPECT_GT(w2.handoff.samples, 0u);
  EXPECT_GT(w2.handoff.p50_us, 0);
  o.workload = bench::Workload::kOwnLock;
  o.name_prefix = "pw1";
  bench::CellResult w1 = bench::run_cell(o);
  ASSERT_TRUE(w1.ok()) << w1.error;
  EXPECT_GT(w1.min_per_client(), 0u);
  // The pipelined ACQUIRE is stamped when it goes out with the RELEASE.
  EXPECT_EQ(w1.acquire.samples, w1.total);
  EXPECT_GT(w1.acquire.p50_us, 0);
  EXPECT_EQ(w1.handoff.samples, 0u) << "W1 has no hand-off";

  auto conn = RespClient::connect(server.port());
  ASSERT_TRUE(conn);
  auto locks = conn->call({"LOCK.LIST"});
  ASSERT_FALSE(locks.is_error()) << locks.str;
  for (const auto& lock : locks.elements) {
    for (std::size_t k = 0; k + 1 < lock.elements.size(); k += 2) {
      const std::string& field = lock.elements[k].str;
      if (field == "holders" || field == "waiters") {
        EXPECT_TRUE(lock.elements[k + 1].elements.empty()) << "a lock still has " << field;
      }
    }
  }
  auto sessions = conn->call({"SESSION.LIST"});
  ASSERT_FALSE(sessions.is_error()) << sessions.str;
  EXPECT_TRUE(sessions.elements.empty()) << sessions.elements.size() << " sessions left open";
}

TEST(LoadBenchSmoke, UnreachableServerIsReportedNotHung) {
  bench::CellOptions o;
  o.endpoint = bench::Endpoint{"127.0.0.1", free_port()};
  o.clients = 2;
  o.duration = std::chrono::milliseconds(100);
  bench::CellResult r = bench::run_cell(o);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.total, 0u);
  EXPECT_NE(r.error.find("unreachable"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace leasehold::testing
