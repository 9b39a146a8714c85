// etcd/client.h: a small etcd v3 client over gRPC (KV, Txn, Compact, Lease).
// Streams live in etcd/watcher.h (Watch) and etcd/keepalive.h (lease
// keepalive); recipes in etcd/election.h and etcd/mutex.h.
//
// Every call has a deadline of `call_timeout` from its start (all endpoint
// attempts included) and returns a Status or Result, never throws.
// Errors:
//   kUnavailable     "etcd unavailable: <op> via <endpoint>: ..." when no
//                    member answered in time (down, no quorum, no leader,
//                    deadline passed). Writes whose outcome is unknown say
//                    "(outcome unknown)": they may or may not have applied.
//   kInvalidArgument bad input (empty key) or etcd rejected the request.
//   kLimitExceeded   key/value/txn over the limits in etcd/types.h, or etcd
//                    refused the size.
//   kNotFound        lease not found; revision compacted or in the future.
//   kInternal        any other gRPC error (message names the gRPC code).
// Endpoints: a channel per endpoint; calls start on the endpoint that last
// worked and fail over to the next one; see etcd/connections.h for the
// exact rule (reads always fail over, writes only when they cannot have
// been sent).
// Thread-safety: all methods may be called concurrently from any thread.
// The Client must outlive every Watcher, LeaseKeepAlive, Election and
// Mutex built on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "etcd/types.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

namespace detail {
class Connections;
}

struct ClientOptions {
  // Comma-separated client URLs, e.g. "http://127.0.0.1:2379,http://127.0.0.1:22379".
  std::string endpoints;
  // Deadline of every unary call, and of stream setup (watch create, first keepalive).
  std::chrono::milliseconds call_timeout{5000};
};

class Client {
 public:
  // Validates the options and creates the channels. Does not connect yet
  // (the first call does), so it succeeds while etcd is down.
  // Errors: kInvalidArgument for a bad endpoint list or a timeout <= 0.
  static Result<std::unique_ptr<Client>> create(const ClientOptions& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Keys in [key, range_end); range_end "" means just `key`, prefix_end(p)
  // means every key starting with p.
  Result<RangeResult> range(std::string_view key, std::string_view range_end = {},
                            const RangeOptions& options = {});
  // Writes key=value, attached to `lease` (0 = none).
  Result<PutResult> put(std::string_view key, std::string_view value, std::int64_t lease = 0);
  Result<DeleteResult> delete_range(std::string_view key, std::string_view range_end = {});
  // Atomically: if every compare holds, run `success`, else `failure`.
  Result<TxnResult> txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                        const std::vector<TxnOp>& failure = {});
  // Discards history before `revision` (watches and reads at older
  // revisions then fail with a compaction error). Returns the store revision.
  Result<std::int64_t> compact(std::int64_t revision);

  // A lease of `ttl_seconds` (>= 1). Keys put with it are deleted when it
  // expires or is revoked.
  Result<LeaseGrant> lease_grant(std::int64_t ttl_seconds);
  // Revokes the lease and deletes its keys. kNotFound if it is already gone.
  Status lease_revoke(std::int64_t lease_id);

  std::chrono::milliseconds call_timeout() const;
  std::size_t endpoint_count() const;

  // For the stream classes in this folder; not for other layers.
  detail::Connections& connections() { return *connections_; }

 private:
  explicit Client(std::unique_ptr<detail::Connections> connections);
  std::unique_ptr<detail::Connections> connections_;
};

}  // namespace leasehold::etcd
