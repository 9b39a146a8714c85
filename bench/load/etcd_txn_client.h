// bench/load/etcd_txn_client.h: the etcd write floor as a load-driver client.
//
// Every step() is ONE durable etcd write shaped like leasehold's fenced log
// append (log/etcd_log.h): a txn "if create_revision(<prefix>/fence) == 0
// then put <prefix>/<client> <16 bytes>". It takes no lock. Its C=1 rate is
// the ceiling of any chain of durable hand-offs through this etcd: a lock
// service that makes each grant durable in etcd before announcing it (as
// leasehold does) cannot hand one lock on faster than this, and neither can
// etcd's own mutex (its hand-off is a delete, a watch event and a read).
//
// Each driver client has its own etcd::Client (own gRPC channels). W1: each
// client its own key; W2: the same, on one shared prefix (no contention in
// etcd's sense: a txn never waits for another client).
//
// Errors: make_etcd_txn_client() fails with kInvalidArgument for a bad
// endpoint list; step() with the etcd client's errors (kUnavailable,
// kTimedOut) or kInternal if the compare ever fails.
// Thread-safety: one thread per client.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "bench/load/lock_clients.h"

namespace leasehold::bench {

// `endpoints`: etcd client URLs, comma-separated. `prefix`: the key prefix.
Result<std::unique_ptr<LockClient>> make_etcd_txn_client(const std::string& endpoints, std::string prefix,
                                                        int index, std::chrono::milliseconds io_timeout);

}  // namespace leasehold::bench
