// bench/load/suite.h: the whole side-by-side run: every workload, every
// client count, every target, in one process, cells interleaved so that all
// targets see the same machine conditions.
//
// Rows (one per workload variant and client count):
//   W1          each client acquires/releases its own lock (cycles/s)
//   W2 r=<d>    all clients contend for one lock (grants/s); leasehold
//               queues (WAIT 0, FIFO hand-off), ZooKeeper and etcd-mutex
//               run their lock recipes (watch the predecessor), Redis
//               spins on SET NX PX with retry delay d; the queueing cells
//               are measured once per client count and shown in every W2
//               row; without Redis targets there is one row, "W2"
//   W3          redis-benchmark SET key:<rand> v NX PX (requests/s; not
//               for ZooKeeper and etcd-mutex)
//
// Thread-safety: run_suite() blocks; call it from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/load/load_runner.h"
#include "bench/load/resp_connection.h"

namespace leasehold::bench {

struct Target {
  std::string name;  // "leasehold", "redis-always", "redis-default", "zookeeper", ...
  System system = System::kRedis;
  Endpoint endpoint;           // every system but the etcd ones
  std::string etcd_endpoints;  // kEtcdMutex, kEtcdTxn, kEtcdLogTxn: etcd client URLs, comma-separated
  bool pipeline = false;       // kLeasehold: the pipelined client (kind leasehold-pipelined)
};

struct SuiteOptions {
  std::vector<Target> targets;
  std::vector<int> clients = {1, 8, 32};
  bool w1 = true, w2 = true, w3 = true;
  std::vector<std::chrono::microseconds> spin_retry_delays = {std::chrono::milliseconds(100),
                                                              std::chrono::microseconds(0)};
  std::chrono::milliseconds warmup{200};
  std::chrono::milliseconds duration{3000};
  std::chrono::milliseconds io_timeout{15000};
  std::int64_t lease_ms = 10000;
  // W3 requests per run; 0: sized from the target's W1 rate so that one run
  // takes about `duration` (bounded to [w3_min_requests, w3_max_requests]).
  std::int64_t w3_requests = 0;
  std::int64_t w3_min_requests = 2000;
  std::int64_t w3_max_requests = 200000;
  std::string redis_benchmark = "redis-benchmark";
  std::string name_prefix = "bench";
  // Called before every cell (e.g. the ceiling's fsync probe); may be empty.
  std::function<void()> before_cell;
  // Progress lines ("W1 C=8 redis-always: 1234 ops/s"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct Measurement {
  double ops_per_s = 0;
  bool has_fairness = false;      // W2 only
  std::uint64_t max_per_client = 0;
  std::uint64_t min_per_client = 0;
  std::string error;              // "" when the cell ran cleanly
  LatencySummary acquire;         // W1/W2: ACQUIRE sent -> granted
  LatencySummary handoff;         // W2: previous holder's release sent -> grant
};

struct Row {
  std::string workload;  // "W1", "W2 r=100ms", "W3"
  int clients = 0;
  std::map<std::string, Measurement> by_target;  // target name -> result
};

std::vector<Row> run_suite(const SuiteOptions& options);

}  // namespace leasehold::bench
