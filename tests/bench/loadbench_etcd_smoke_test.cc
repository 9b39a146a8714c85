// Smoke test of the load driver's etcd-mutex client (etcd's own lock recipe,
// bench/load/etcd_mutex_client.h) against a real 1-member etcd on a free
// loopback port: a short W2 cell (all clients on one lock) and a short W1
// cell (each client its own lock) complete cycles without errors, every W2
// client gets grants, and no lock key is left behind (every cycle unlocked,
// the waiters at the window's end drained). Not a performance test: no rate is judged.
// Also the write-floor clients (etcd-txn, etcd-logtxn): they write and clean up.
#include <gtest/gtest.h>

#include <chrono>

#include "bench/load/load_runner.h"
#include "etcd/client.h"
#include "testkit/etcd_cluster.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;

bench::CellOptions etcd_cell(const EtcdCluster& etcd, bench::Workload workload,
                             const std::string& prefix) {
  bench::CellOptions o;
  o.system = bench::System::kEtcdMutex;
  o.workload = workload;
  o.etcd_endpoints = etcd.endpoints();
  o.clients = 2;
  o.warmup = 100ms;
  o.duration = 1000ms;
  o.io_timeout = 10000ms;
  o.lease_ms = 5000;
  o.name_prefix = prefix;
  return o;
}

// Keys left under "/<prefix>" (lock keys of unrevoked leases).
std::size_t keys_left(const EtcdCluster& etcd, const std::string& prefix) {
  auto client = etcd::Client::create({etcd.endpoints(), 5000ms});
  EXPECT_TRUE(client.is_ok());
  if (!client) return 0;
  std::string from = "/" + prefix;
  auto range = (*client)->range(from, etcd::prefix_end(from));
  EXPECT_TRUE(range.is_ok()) << range.status().to_string();
  return range ? range->kvs.size() : 0;
}

TEST(LoadBenchEtcdSmoke, EtcdMutexCellsRunAgainstRealEtcd) {
  auto etcd = EtcdCluster::start();
  ASSERT_TRUE(etcd.is_ok()) << etcd.status().to_string();

  bench::CellResult w2 = bench::run_cell(etcd_cell(**etcd, bench::Workload::kOneLock, "w2"));
  ASSERT_TRUE(w2.ok()) << w2.error;
  ASSERT_EQ(w2.per_client.size(), 2u);
  EXPECT_GT(w2.min_per_client(), 0u) << "FIFO queue: both clients get the lock";
  EXPECT_DOUBLE_EQ(w2.ops_per_s, static_cast<double>(w2.total) / 1.0);

  bench::CellResult w1 = bench::run_cell(etcd_cell(**etcd, bench::Workload::kOwnLock, "w1"));
  ASSERT_TRUE(w1.ok()) << w1.error;
  EXPECT_GT(w1.min_per_client(), 0u);

  EXPECT_EQ(keys_left(**etcd, "w2"), 0u);
  EXPECT_EQ(keys_left(**etcd, "w1"), 0u);
}

// The etcd write floor client: one fenced txn per cycle, every client
// counts, and finish() deletes its key.
TEST(LoadBenchEtcdSmoke, EtcdTxnFloorCellWritesAndCleansUp) {
  auto etcd = EtcdCluster::start();
  ASSERT_TRUE(etcd.is_ok()) << etcd.status().to_string();
  bench::CellOptions o = etcd_cell(**etcd, bench::Workload::kOneLock, "floor");
  o.system = bench::System::kEtcdTxn;
  bench::CellResult r = bench::run_cell(o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.min_per_client(), 0u);
  EXPECT_EQ(keys_left(**etcd, "floor"), 0u);
}

// The log-shaped client: a new key per write under its own prefix, and
// finish() deletes all of them.
TEST(LoadBenchEtcdSmoke, EtcdLogTxnCellWritesNewKeysAndCleansUp) {
  auto etcd = EtcdCluster::start();
  ASSERT_TRUE(etcd.is_ok()) << etcd.status().to_string();
  bench::CellOptions o = etcd_cell(**etcd, bench::Workload::kOneLock, "logtxn");
  o.system = bench::System::kEtcdLogTxn;
  bench::CellResult r = bench::run_cell(o);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.min_per_client(), 1u) << "every client wrote more than one key";
  EXPECT_EQ(keys_left(**etcd, "logtxn"), 0u);
}

TEST(LoadBenchEtcdSmoke, UnreachableEtcdIsReportedNotHung) {
  bench::CellOptions o;
  o.system = bench::System::kEtcdMutex;
  o.etcd_endpoints = "http://127.0.0.1:1";
  o.clients = 2;
  o.duration = 100ms;
  o.io_timeout = 1000ms;
  auto start = std::chrono::steady_clock::now();
  bench::CellResult r = bench::run_cell(o);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.total, 0u);
  EXPECT_NE(r.error.find("unavailable"), std::string::npos) << r.error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

}  // namespace
}  // namespace leasehold::testing
