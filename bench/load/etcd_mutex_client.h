// bench/load/etcd_mutex_client.h: etcd's own lock recipe (etcd/mutex.h, like
// etcd's concurrency.Mutex) as a load-driver client, the baseline that
// leasehold-on-etcd is compared with. Driven from our C++ gRPC client
// (leasehold_etcd), so no Go toolchain is needed.
//
// Each driver client has its own etcd::Client (its own gRPC channels) and,
// like etcd's concurrency.Session, one lease granted at setup and kept alive
// from a background thread for the whole cell (TTL = the driver's lease,
// rounded up to whole seconds). One cycle is Mutex::lock (txn: put
// "<prefix>/<lease hex>" if create_revision == 0; then a read of the
// predecessor and, if there is one, a watch until it is deleted) followed by
// Mutex::unlock (txn: delete the own key if still ours). At the end the
// lease is revoked.
//
// W1: each client its own prefix; W2: all clients one prefix (FIFO by create
// revision, one waiter woken per release).
//
// Errors: make_etcd_mutex_client() fails with kInvalidArgument for a bad
// endpoint list; setup() with the etcd client's errors (it retries the lease
// grant while etcd is kUnavailable, up to the I/O timeout);
// step() with Mutex errors (kTimedOut when a lock is not granted within the
// I/O timeout, kSessionExpired when the lease is gone, kUnavailable).
// Thread-safety: one thread per client (the keepalive has its own thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "bench/load/lock_clients.h"

namespace leasehold::bench {

// `endpoints`: etcd client URLs, comma-separated ("http://127.0.0.1:2379,...").
// `prefix`: the lock's key prefix. `lease_ms`: the session lease TTL.
Result<std::unique_ptr<LockClient>> make_etcd_mutex_client(const std::string& endpoints,
                                                          std::string prefix,
                                                          std::int64_t lease_ms,
                                                          std::chrono::milliseconds io_timeout);

}  // namespace leasehold::bench
