// etcd/connections.h: INTERNAL to etcd/ (includes gRPC; never include it
// from other layers). One gRPC channel and stub set per endpoint, the
// failover rule for unary calls, deadlines and the gRPC -> Status mapping.
//
// Failover rule for unary calls (one deadline for the whole call, all
// attempts included):
//   - The call starts at the current endpoint (the last one that worked).
//   - kIdempotent (reads): on UNAVAILABLE the next endpoint is tried.
//   - kMutation (writes): on UNAVAILABLE the next endpoint is tried only if
//     the channel was not connected (state != READY) when the attempt
//     started, i.e. the request cannot have reached etcd. Otherwise (and
//     on a timeout) the outcome is unknown: the error is returned with
//     "(outcome unknown)" in its message. Such a write may still apply
//     later, e.g. when a lost quorum comes back.
//   - DEADLINE_EXCEEDED ends the call. Every failure moves the current
//     endpoint on, so the next call starts elsewhere (a SIGSTOPped member
//     costs one timeout, not every call).
// Cluster identity: every etcd answer names its cluster (the header's
// cluster_id). The first answer fixes the cluster of this client; an answer
// from another cluster (an endpoint list that mixes clusters, or a member's
// port that another etcd took after the member died) is never used: the
// attempt counts as failed with kUnavailable "... belongs to another etcd
// cluster ...", and the call goes on to the next endpoint. A write sent
// there did not apply to this client's cluster, so moving on is safe for
// writes too. Streams (etcd/watcher.h, etcd/keepalive.h) end the same way
// and reconnect elsewhere. An etcd restored from a snapshot is a new
// cluster: restart the client's process after a restore.
// Authentication (ClientOptions::user): every attempt carries the token of
// etcd/auth.h; a call that etcd refuses for its token gets a new token and is
// repeated once (etcd refused it before applying anything).
// TLS: https:// endpoints get a channel with grpc::SslCredentials built from
// ClientOptions::tls (CA, client certificate and key); http:// ones an
// insecure channel.
// Thread-safety: all members are safe to call concurrently (gRPC stubs are
// thread-safe; the current index is atomic).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etcd/auth.h"
#include "etcd/client.h"
#include "etcd/endpoints.h"
#include "etcd_api.grpc.pb.h"
#include "leasehold/status.h"

namespace leasehold::etcd::detail {

using Clock = std::chrono::steady_clock;

// One gRPC channel to an endpoint and its stubs. Calls and streams hold a
// shared_ptr for as long as they use it, so a replaced channel stays alive
// until its last user is done.
struct Stubs {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<etcdserverpb::KV::Stub> kv;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch;
  std::unique_ptr<etcdserverpb::Auth::Stub> auth;
};

// CHANNEL RENEWAL: gRPC channels whose connection attempts keep failing can
// stay in failure after the member came back (seen with gRPC 1.51: "tcp
// handshaker shutdown" for 30 s and more after a 5 s outage of a 1-member
// etcd). A unary call that fails UNAVAILABLE on a channel that was not
// connected reports it; once an endpoint has failed that way for
// kRenewAfter with no success, its channel is replaced by a fresh one (at
// most once per kRenewAfter). Streams pick up the new channel when they
// reconnect.
class Endpoint {
 public:
  static constexpr std::chrono::seconds kRenewAfter{2};

  Endpoint(std::string target, std::shared_ptr<grpc::ChannelCredentials> credentials, bool tls);
  const std::string& target() const { return target_; }
  bool tls() const { return tls_; }
  std::shared_ptr<const Stubs> stubs() const;
  void note_success();
  // A call on `used` failed UNAVAILABLE while its channel was not connected.
  void note_unconnected_failure(const std::shared_ptr<const Stubs>& used);

 private:
  const std::string target_;  // "127.0.0.1:2379"
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const bool tls_;
  mutable std::mutex mu_;
  std::shared_ptr<const Stubs> stubs_;              // guarded by mu_
  std::optional<Clock::time_point> failing_since_;  // guarded by mu_
  Clock::time_point renewed_at_{};                  // guarded by mu_
};

enum class Retry : std::uint8_t { kIdempotent, kMutation };

using Attempt = std::function<grpc::Status(const Stubs&, grpc::ClientContext&)>;
// After an attempt succeeded: the cluster_id in its answer's header.
using AnsweredCluster = std::function<std::uint64_t()>;

// The AnsweredCluster of `response` (any etcd response with a header).
template <class Response>
AnsweredCluster cluster_of(const Response& response) {
  return [&response] { return response.header().cluster_id(); };
}

class Connections {
 public:
  Connections(const std::vector<EndpointUrl>& endpoints, const ClientOptions& options);

  std::size_t size() const { return endpoints_.size(); }
  std::chrono::milliseconds call_timeout() const { return call_timeout_; }
  Endpoint& endpoint(std::size_t index) { return *endpoints_[index % endpoints_.size()]; }
  // Index of the endpoint new calls and streams start on.
  std::size_t current() const { return current_.load(std::memory_order_relaxed); }
  // Moves the current endpoint past `failed` (no-op if another thread already did).
  void advance_from(std::size_t failed);
  void mark_good(std::size_t index) { current_.store(index % endpoints_.size(), std::memory_order_relaxed); }

  // Runs one unary call under the failover rule above, with the token when
  // authentication is on, and the cluster check on every answer. `what`
  // names the operation in error messages ("put", "txn", ...).
  Status unary(std::string_view what, Retry retry, const AnsweredCluster& answered, const Attempt& attempt);
  // The failover loop itself, ending by `deadline`, with `token` (nullptr:
  // none). `refused_token`, when given, is set when etcd refused the token
  // (Auth::needs_new_token), which ends the loop.
  Status unary_until(std::string_view what, Retry retry, Clock::time_point deadline, const std::string* token,
                     const AnsweredCluster& answered, const Attempt& attempt, bool* refused_token = nullptr);

  // The cluster check for one answer from `target`: fixes the cluster on the
  // first answer; kUnavailable "etcd unavailable: <what> via <target>: it
  // belongs to another etcd cluster ..." for an answer of another one.
  // (cluster_id 0, which etcd never sends, is not checked.)
  Status check_cluster(std::uint64_t cluster_id, std::string_view what, std::string_view target);
  // The cluster of this client; 0 until the first answer.
  std::uint64_t cluster_id() const { return cluster_id_.load(std::memory_order_relaxed); }
  // How many answers came from another cluster (and were not used).
  std::uint64_t foreign_answers() const { return foreign_answers_.load(std::memory_order_relaxed); }

  Auth& auth() { return auth_; }
  // The token for a stream starting now (authenticating within the call
  // timeout if needed); "" without authentication.
  Result<std::string> stream_token();

 private:
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::chrono::milliseconds call_timeout_;
  Auth auth_;
  std::atomic<std::size_t> current_{0};
  std::atomic<std::uint64_t> cluster_id_{0};
  std::atomic<std::uint64_t> foreign_answers_{0};
};

// Sets a monotonic-clock deadline on a gRPC context.
void set_deadline(grpc::ClientContext& context, Clock::time_point deadline);

// UNAVAILABLE, DEADLINE_EXCEEDED, and etcd's UNKNOWN "context deadline
// exceeded" / "context canceled" / "raft proposal dropped": no answer now.
bool is_unavailable(const grpc::Status& status);
// The deadline fired (on our side or etcd's).
bool is_timeout(const grpc::Status& status);

// gRPC status -> leasehold Status. UNAVAILABLE and DEADLINE_EXCEEDED become
// kUnavailable "etcd unavailable: <what> via <target>: <detail>" (a failed
// TLS handshake says so and names the --etcd-* flags to check);
// PERMISSION_DENIED becomes kInternal "etcd user has no permission for ...".
Status to_status(const grpc::Status& status, std::string_view what, std::string_view target);

}  // namespace leasehold::etcd::detail
