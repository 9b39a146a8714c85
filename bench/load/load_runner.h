// bench/load/load_runner.h: runs one cell of the load benchmark: one
// workload against one server with C concurrent clients.
//
// Every client is its own thread with its own TCP connection. All clients
// connect and run setup() first; then they start together, run step() in a
// loop through a warm-up and a measured window, and stop by themselves when
// the window ends. A cycle counts when it completes inside the measured
// window. A client that is blocked when the window ends (leasehold WAIT 0)
// finishes its cycle (the lock is handed on within the drain bound), so the
// server is left clean; the connection's I/O timeout bounds every call.
//
// Workloads:
//   kOwnLock  (W1) client i acquires and releases its own lock i.
//   kOneLock  (W2) all clients contend for one lock.
// Systems: leasehold (LOCK.ACQUIRE/RELEASE, WAIT 0 for W2), Redis (SET NX PX
// spin-lock + compare-and-delete), ZooKeeper (the ephemeral-sequential lock
// recipe; see zk_lock_client.h), etcd's own mutex (etcd_mutex_client.h).
//
// Latencies: every counted cycle's acquire latency, and in kOneLock its
// hand-off latency (LockClient's release clock, shared by the cell).
//
// Errors: never fails as a whole; a client that hits an error stops and the
// first error is reported in CellResult::error (its cycles so far count).
// Thread-safety: run_cell() may be called from any thread; it blocks until
// every client thread has joined.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/load/resp_connection.h"

namespace leasehold::bench {

// kEtcdTxn and kEtcdLogTxn are no lock: one fenced etcd write per step, the
// write floor and a write shaped like leasehold's log append
// (etcd_txn_client.h).
enum class System : std::uint8_t { kLeasehold, kRedis, kZookeeper, kEtcdMutex, kEtcdTxn, kEtcdLogTxn };
enum class Workload : std::uint8_t { kOwnLock, kOneLock };

struct CellOptions {
  System system = System::kRedis;
  Workload workload = Workload::kOwnLock;
  Endpoint endpoint;              // RESP and ZooKeeper targets
  std::string etcd_endpoints;     // kEtcdMutex, kEtcdTxn, kEtcdLogTxn: "http://127.0.0.1:2379,..."
  // kLeasehold: send each RELEASE with the next ACQUIRE in one write
  // (LeaseholdLockClient's pipelined mode).
  bool pipeline = false;
  int clients = 1;
  std::chrono::milliseconds warmup{200};
  std::chrono::milliseconds duration{3000};
  std::chrono::milliseconds io_timeout{15000};
  // Redis spin-lock: pause between failed SET NX attempts (0: pure spin).
  std::chrono::microseconds retry_delay{0};
  std::int64_t lease_ms = 10000;  // Redis PX, leasehold session and etcd lease TTL
  // Prefix of lock names / keys; make it unique per cell, because a
  // leasehold server keeps its state between cells.
  std::string name_prefix = "bench";
};

// Percentiles of the latencies of the cycles counted in the window, in
// microseconds; `samples` 0 (and p50/p99 -1) when none were timed.
struct LatencySummary {
  double p50_us = -1;
  double p99_us = -1;
  std::size_t samples = 0;
};

// p50 and p99 (nearest rank) of `samples_ns`; reorders it.
LatencySummary summarize_latencies(std::vector<std::int64_t>& samples_ns);

struct CellResult {
  std::uint64_t total = 0;                 // cycles completed in the window
  double ops_per_s = 0;                    // total / measured seconds
  std::vector<std::uint64_t> per_client;   // cycles per client in the window
  std::string error;                       // first client error, "" if none
  LatencySummary acquire;                  // ACQUIRE sent -> granted (every cycle)
  LatencySummary handoff;                  // previous release sent -> grant (kOneLock)

  bool ok() const { return error.empty(); }
  std::uint64_t max_per_client() const;
  std::uint64_t min_per_client() const;
  // max/min grants per client; +infinity when some client got none.
  double fairness() const;
};

CellResult run_cell(const CellOptions& options);

}  // namespace leasehold::bench
