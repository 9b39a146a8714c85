// bench/load/etcd_txn_client.h: the etcd write floor as a load-driver client.
//
// Every step() is ONE durable etcd write, in one of two shapes. Neither
// takes a lock.
//  - kFloor ("etcd-txn"): the cheapest fenced write, a txn "if
//    create_revision(<prefix>/fence) == 0 then put <prefix>/c<client>
//    <16 bytes>", the same key every time. Its C=1 rate is the ceiling of
//    any chain of durable hand-offs through this etcd: a lock service that
//    makes each grant durable in etcd before announcing it (as leasehold
//    does) cannot hand one lock on faster than this, and neither can etcd's
//    own mutex (its hand-off is a delete, a watch event and a read).
//  - kLogAppend ("etcd-logtxn"): a txn shaped like leasehold's log append
//    (EtcdLog::do_append, log/etcd_log.cc): two compares (the fence key, as
//    the election key is compared, and "create_revision(<new key>) == 0"),
//    a put of a NEW key per step (<prefix>/c<client>/<20 digits>) with an
//    80-byte value (the median W2 log entry at C=32), and a get of that
//    key on failure. Its C=1 rate is what the log
//    write of a hand-off alone allows, with nothing else on its path.
//
// Each driver client has its own etcd::Client (own gRPC channels). W1: each
// client its own key; W2: the same, on one shared prefix (no contention in
// etcd's sense: a txn never waits for another client).
//
// finish() deletes every key the client wrote.
// Errors: make_etcd_txn_client() fails with kInvalidArgument for a bad
// endpoint list; step() with the etcd client's errors (kUnavailable,
// kTimedOut) or kInternal if a compare ever fails.
// Thread-safety: one thread per client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/load/lock_clients.h"

namespace leasehold::bench {

enum class EtcdTxnShape : std::uint8_t { kFloor, kLogAppend };

// `endpoints`: etcd client URLs, comma-separated. `prefix`: the key prefix.
Result<std::unique_ptr<LockClient>> make_etcd_txn_client(const std::string& endpoints, std::string prefix,
                                                        int index, std::chrono::milliseconds io_timeout,
                                                        EtcdTxnShape shape = EtcdTxnShape::kFloor);

}  // namespace leasehold::bench
