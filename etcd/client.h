// etcd/client.h: a small etcd v3 client over gRPC (KV, Txn, Compact, Lease).
// Streams live in etcd/watcher.h (Watch) and etcd/keepalive.h (lease
// keepalive); recipes in etcd/election.h and etcd/mutex.h; authentication
// and TLS in etcd/auth.h and etcd/connections.h.
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
// Security: https:// endpoints are reached over TLS (ClientOptions::tls);
// with ClientOptions::user every call and stream carries an etcd auth token
// (etcd/auth.h: fetched with the password, renewed when etcd refuses it).
// Auth errors: kInvalidArgument "etcd authentication as user 'U' failed:
// wrong user name or password ..."; a request the user's role does not
// permit: kInternal "etcd user 'U' has no permission for <op> via
// <endpoint> ...". A failed TLS handshake is kUnavailable "etcd
// unavailable: TLS handshake failed: ..." (etcd/connections.h).
// Endpoints: a channel per endpoint; calls start on the endpoint that last
// worked and fail over to the next one; see etcd/connections.h for the
// exact rule (reads always fail over, writes only when they cannot have
// been sent).
// Cluster identity: the first answer fixes the etcd cluster this client
// talks to (its cluster id); an answer of any other cluster is never used:
// the call goes on to the next endpoint or fails with kUnavailable "...
// belongs to another etcd cluster ...", and a watch or keepalive stream
// reconnects elsewhere. A write sent there did not apply to this client's
// cluster. Error answers carry no cluster id and are not checked.
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

// PEM texts (not file names) for https:// endpoints.
struct ClientTls {
  std::string ca_pem;    // CAs that sign etcd's certificate; "" = gRPC's default roots
  std::string cert_pem;  // client certificate (chain) for etcd's --client-cert-auth; "" = none
  std::string key_pem;   // its private key (both or neither)
};

struct ClientOptions {
  // Comma-separated client URLs, e.g. "http://127.0.0.1:2379,https://127.0.0.1:22379".
  std::string endpoints;
  // Deadline of every unary call, and of stream setup (watch create, first keepalive).
  std::chrono::milliseconds call_timeout{5000};
  // (Initialised so that {endpoints, timeout} aggregate initialisation stays warning-free.)
  ClientTls tls = {};         // used only for https:// endpoints
  std::string user = {};      // etcd user; "" = no authentication
  std::string password = {};  // its password
};

class Client {
 public:
  // Validates the options and creates the channels. Does not connect yet
  // (the first call does), so it succeeds while etcd is down.
  // Errors: kInvalidArgument for a bad endpoint list, a timeout <= 0, TLS
  // material without any https:// endpoint, a certificate without its key
  // (or the reverse), a password without a user.
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

  // Checks that the user may read and write every key starting with
  // `prefix` (e.g. "/leasehold/main/"): a
  // transaction whose compare never holds, with a put, a range and a delete
  // under the prefix in its branches, so etcd checks every permission and
  // changes nothing. Errors: as the calls above (e.g. kInternal "etcd user
  // 'U' has no permission ...", kInvalidArgument wrong password).
  Status check_access(std::string_view prefix);
  // The password of the next authentication (e.g. a re-read password
  // file); the current token stays in use until etcd refuses it.
  void set_password(std::string password);

  std::chrono::milliseconds call_timeout() const;
  std::size_t endpoint_count() const;
  // The etcd cluster id of this client; 0 before the first answer.
  std::uint64_t cluster_id() const;
  // Answers of another etcd cluster, not used (see "Cluster identity").
  std::uint64_t foreign_answers() const;

  // For the stream classes in this folder; not for other layers.
  detail::Connections& connections() { return *connections_; }

 private:
  explicit Client(std::unique_ptr<detail::Connections> connections);
  std::unique_ptr<detail::Connections> connections_;
};

}  // namespace leasehold::etcd
