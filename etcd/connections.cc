#include "etcd/connections.h"

#include <cinttypes>
#include <cstdio>

#include <grpc/support/time.h>

namespace leasehold::etcd::detail {
namespace {

constexpr int kMaxReceiveBytes = 32 * 1024 * 1024;

std::shared_ptr<grpc::Channel> make_channel(const std::string& target,
                                           const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments args;
  // Reconnect quickly after a member restarts (gRPC's default backoff grows to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // gRPC also uses this as the minimum time a connection attempt may take
  // (TCP + HTTP/2 handshake). At 100 ms a busy machine's etcd did not send
  // its SETTINGS frame in time and calls failed UNAVAILABLE at once
  // ("connection attempt timed out before receiving SETTINGS frame").
  // Calls still end at their own deadline; a refused connection still fails at once.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  // Detect a silent (stopped or partitioned) member under long-lived
  // streams. etcd rejects pings more often than every 5 s by default.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 6000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 3000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  // Each client owns its connections (no sharing through the global pool).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, credentials, args);
}

const char* grpc_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "grpc error";
  }
}

// gRPC's words for a TLS handshake that failed (wrong CA, no or refused
// client certificate, a plain-text server).
bool tls_handshake_failed(const grpc::Status& status) {
  const std::string& m = status.error_message();
  return m.find("Ssl handshake failed") != std::string::npos || m.find("SSL_ERROR") != std::string::npos ||
         m.find("Handshake failed") != std::string::npos || m.find("handshake failed") != std::string::npos;
}

// A connection the peer closed before it was usable (gRPC's words): on a TLS
// endpoint typically etcd refusing our client certificate.
bool closed_during_setup(const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE || tls_handshake_failed(status)) return false;
  const std::string& m = status.error_message();
  return m.find("handshaker shutdown") != std::string::npos || m.find("Endpoint read failed") != std::string::npos ||
         m.find("Socket closed") != std::string::npos;
}

// etcd answers UNKNOWN with Go's context error when its side of our
// deadline fires first, and when Raft dropped a proposal (no leader).
bool unknown_containing(const grpc::Status& status, std::string_view text) {
  return status.error_code() == grpc::StatusCode::UNKNOWN &&
         status.error_message().find(text) != std::string::npos;
}

}  // namespace

bool is_timeout(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         unknown_containing(status, "context deadline exceeded");
}

bool is_unavailable(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE || is_timeout(status) ||
         unknown_containing(status, "context canceled") || unknown_containing(status, "proposal dropped");
}

std::shared_ptr<const Stubs> make_stubs(const std::string& target,
                                        const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  auto stubs = std::make_shared<Stubs>();
  stubs->channel = make_channel(target, credentials);
  stubs->kv = etcdserverpb::KV::NewStub(stubs->channel);
  stubs->lease = etcdserverpb::Lease::NewStub(stubs->channel);
  stubs->watch = etcdserverpb::Watch::NewStub(stubs->channel);
  stubs->auth = etcdserverpb::Auth::NewStub(stubs->channel);
  return stubs;
}

Endpoint::Endpoint(std::string target, std::shared_ptr<grpc::ChannelCredentials> credentials, bool tls)
    : target_(std::move(target)),
      credentials_(std::move(credentials)),
      tls_(tls),
      stubs_(make_stubs(target_, credentials_)) {}

std::shared_ptr<const Stubs> Endpoint::stubs() const {
  std::lock_guard lock(mu_);
  return stubs_;
}

void Endpoint::note_success() {
  std::lock_guard lock(mu_);
  failing_since_.reset();
}

void Endpoint::note_unconnected_failure(const std::shared_ptr<const Stubs>& used) {
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mu_);
  if (used != stubs_) return;  // already renewed
  if (!failing_since_) failing_since_ = now;
  if (now - *failing_since_ < kRenewAfter || now - renewed_at_ < kRenewAfter) return;
  stubs_ = make_stubs(target_, credentials_);
  renewed_at_ = now;
  failing_since_ = now;
}

Connections::Connections(const std::vector<EndpointUrl>& endpoints, const ClientOptions& options)
    : call_timeout_(options.call_timeout), auth_(options.user, options.password) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = options.tls.ca_pem;  // "": gRPC's default roots
  ssl.pem_private_key = options.tls.key_pem;
  ssl.pem_cert_chain = options.tls.cert_pem;
  const auto tls = grpc::SslCredentials(ssl);
  const auto plain = grpc::InsecureChannelCredentials();
  endpoints_.reserve(endpoints.size());
  for (const EndpointUrl& e : endpoints) endpoints_.push_back(std::make_unique<Endpoint>(e.target, e.tls ? tls : plain, e.tls));
}

Result<std::string> Connections::stream_token() {
  if (!auth_.enabled()) return std::string();
  return auth_.token(*this, Clock::now() + call_timeout_);
}

void Connections::advance_from(std::size_t failed) {
  std::size_t expected = failed % endpoints_.size();
  current_.compare_exchange_strong(expected, (expected + 1) % endpoints_.size(),
                                   std::memory_order_relaxed);
}

Status Connections::check_cluster(std::uint64_t cluster_id, std::string_view what, std::string_view target) {
  if (cluster_id == 0) return Status::ok();
  std::uint64_t expected = cluster_id_.load(std::memory_order_relaxed);
  if (expected == cluster_id) return Status::ok();  // every answer but the first
  if (expected == 0 && (cluster_id_.compare_exchange_strong(expected, cluster_id, std::memory_order_relaxed) ||
                        expected == cluster_id)) {
    return Status::ok();
  }
  foreign_answers_.fetch_add(1, std::memory_order_relaxed);
  char ids[96];
  std::snprintf(ids, sizeof ids, "cluster id %" PRIx64 ", not %" PRIx64, cluster_id, expected);
  return Status(ErrorCode::kUnavailable,
                "etcd unavailable: " + std::string(what) + " via " + std::string(target) +
                    ": it belongs to another etcd cluster (" + ids +
                    ", the cluster this process first reached); its answer was not used. Check the etcd "
                    "endpoint list (an etcd restored from a snapshot is a new cluster: restart this process)");
}

Status Connections::unary(std::string_view what, Retry retry, const AnsweredCluster& answered,
                          const Attempt& attempt) {
  const Clock::time_point deadline = Clock::now() + call_timeout_;
  if (!auth_.enabled()) return unary_until(what, retry, deadline, nullptr, answered, attempt);
  for (int round = 0;; ++round) {
    auto token = auth_.token(*this, deadline);
    if (!token) return token.status();
    bool refused = false;
    Status s = unary_until(what, retry, deadline, &*token, answered, attempt, &refused);
    if (!refused) return s;
    auth_.invalidate(*token);
    if (round == 1) return s;  // a fresh token refused too
  }
}

Status Connections::unary_until(std::string_view what, Retry retry, Clock::time_point deadline,
                                const std::string* token, const AnsweredCluster& answered, const Attempt& attempt,
                                bool* refused_token) {
  const std::size_t start = current();
  Status last(ErrorCode::kUnavailable, "etcd unavailable: " + std::string(what) + ": deadline passed");
  Status foreign;  // the last answer of another cluster, named in the final error
  auto with_foreign = [&](Status s) {
    if (foreign.is_ok() || s.is_ok() || s.message() == foreign.message()) return s;
    return Status(s.code(), s.message() + "; and " + foreign.message());
  };
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    const std::size_t index = (start + i) % endpoints_.size();
    Endpoint& ep = *endpoints_[index];
    if (Clock::now() >= deadline) break;
    const std::shared_ptr<const Stubs> stubs = ep.stubs();
    const bool was_connected = stubs->channel->GetState(false) == GRPC_CHANNEL_READY;
    grpc::ClientContext context;
    set_deadline(context, deadline);
    if (token != nullptr) Auth::attach(context, *token);
    const grpc::Status status = attempt(*stubs, context);
    if (status.ok()) {
      ep.note_success();
      if (Status s = check_cluster(answered(), what, ep.target()); !s) {
        foreign = s;
        last = s;
        advance_from(index);
        continue;  // nothing was applied to this client's cluster: the next endpoint may take it
      }
      mark_good(index);
      return Status::ok();
    }
    last = to_status(status, what, ep.target());
    if (ep.tls() && closed_during_setup(status)) {
      last = Status(last.code(), last.message() +
                                     " (the TLS connection was closed while it was set up: does etcd trust the "
                                     "client certificate, if it requires one?)");
    }
    if (token != nullptr && refused_token != nullptr && Auth::needs_new_token(status)) {
      ep.note_success();  // etcd answered, before applying anything
      *refused_token = true;
      return last;
    }
    if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED && auth_.enabled()) {
      ep.note_success();
      return Status(ErrorCode::kInternal, "etcd user '" + auth_.user() + "' has no permission for " +
                                              std::string(what) + " via " + ep.target() +
                                              " (etcd: " + status.error_message() +
                                              "): its role needs readwrite on the cluster's key prefix");
    }
    if (!is_unavailable(status)) {
      ep.note_success();  // etcd answered
      return last;        // an error about the request itself
    }
    if (!was_connected) ep.note_unconnected_failure(stubs);
    advance_from(index);
    const bool timed_out = is_timeout(status);
    // A write that may have reached etcd can still apply later (e.g. once a
    // quorum is back): the caller must not assume it failed.
    if (retry == Retry::kMutation && (was_connected || timed_out)) {
      return with_foreign(Status(ErrorCode::kUnavailable, last.message() + " (outcome unknown)"));
    }
    if (timed_out) break;
  }
  return with_foreign(last);
}

void set_deadline(grpc::ClientContext& context, Clock::time_point deadline) {
  auto remaining = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now());
  if (remaining.count() < 0) remaining = std::chrono::microseconds(0);
  context.set_deadline(gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                    gpr_time_from_micros(remaining.count(), GPR_TIMESPAN)));
}

Status to_status(const grpc::Status& status, std::string_view what, std::string_view target) {
  if (status.ok()) return Status::ok();
  const std::string detail = std::string(what) + " via " + std::string(target) + ": " +
                             grpc_code_name(status.error_code()) + ": " + status.error_message();
  if (tls_handshake_failed(status)) {
    return Status(ErrorCode::kUnavailable,
                  "etcd unavailable: TLS handshake failed: " + detail +
                      " (check the CA certificate that signed etcd's certificate, the client certificate and key etcd "
                      "trusts, and https:// for a TLS etcd)");
  }
  // UNAVAILABLE and DEADLINE_EXCEEDED are among these.
  if (is_unavailable(status)) return Status(ErrorCode::kUnavailable, "etcd unavailable: " + detail);
  switch (status.error_code()) {
    case grpc::StatusCode::CANCELLED:
      return Status(ErrorCode::kUnavailable, "etcd unavailable: " + detail);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status(ErrorCode::kInvalidArgument, "etcd rejected " + detail);
    case grpc::StatusCode::NOT_FOUND:
      return Status(ErrorCode::kNotFound, "etcd: " + detail);
    case grpc::StatusCode::OUT_OF_RANGE:  // compacted or future revision
      return Status(ErrorCode::kNotFound, "etcd: " + detail);
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status(ErrorCode::kConflict, "etcd: " + detail);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return Status(ErrorCode::kLimitExceeded, "etcd: " + detail);
    default:
      return Status(ErrorCode::kInternal, "etcd: " + detail);
  }
}

}  // namespace leasehold::etcd::detail
