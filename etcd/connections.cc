#include "etcd/connections.h"

#include <grpc/support/time.h>

namespace leasehold::etcd::detail {
namespace {

constexpr int kMaxReceiveBytes = 32 * 1024 * 1024;

std::shared_ptr<grpc::Channel> make_channel(const std::string& target) {
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
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
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

std::shared_ptr<const Stubs> make_stubs(const std::string& target) {
  auto stubs = std::make_shared<Stubs>();
  stubs->channel = make_channel(target);
  stubs->kv = etcdserverpb::KV::NewStub(stubs->channel);
  stubs->lease = etcdserverpb::Lease::NewStub(stubs->channel);
  stubs->watch = etcdserverpb::Watch::NewStub(stubs->channel);
  return stubs;
}

Endpoint::Endpoint(std::string target) : target_(std::move(target)), stubs_(make_stubs(target_)) {}

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
  stubs_ = make_stubs(target_);
  renewed_at_ = now;
  failing_since_ = now;
}

Connections::Connections(const std::vector<std::string>& targets, std::chrono::milliseconds call_timeout)
    : call_timeout_(call_timeout) {
  endpoints_.reserve(targets.size());
  for (const std::string& target : targets) endpoints_.push_back(std::make_unique<Endpoint>(target));
}

void Connections::advance_from(std::size_t failed) {
  std::size_t expected = failed % endpoints_.size();
  current_.compare_exchange_strong(expected, (expected + 1) % endpoints_.size(),
                                   std::memory_order_relaxed);
}

Status Connections::unary(std::string_view what, Retry retry, const Attempt& attempt) {
  const Clock::time_point deadline = Clock::now() + call_timeout_;
  const std::size_t start = current();
  Status last(ErrorCode::kUnavailable, "etcd unavailable: " + std::string(what) + ": deadline passed");
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    const std::size_t index = (start + i) % endpoints_.size();
    Endpoint& ep = *endpoints_[index];
    if (Clock::now() >= deadline) break;
    const std::shared_ptr<const Stubs> stubs = ep.stubs();
    const bool was_connected = stubs->channel->GetState(false) == GRPC_CHANNEL_READY;
    grpc::ClientContext context;
    set_deadline(context, deadline);
    const grpc::Status status = attempt(*stubs, context);
    if (status.ok()) {
      ep.note_success();
      mark_good(index);
      return Status::ok();
    }
    last = to_status(status, what, ep.target());
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
      return Status(ErrorCode::kUnavailable, last.message() + " (outcome unknown)");
    }
    if (timed_out) break;
  }
  return last;
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
