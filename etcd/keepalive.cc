#include "etcd/keepalive.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "etcd/connections.h"

namespace leasehold::etcd {

using Clock = std::chrono::steady_clock;

struct LeaseKeepAlive::Stream {
  std::shared_ptr<const detail::Stubs> stubs;  // first: outlives the call below
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::LeaseKeepAliveRequest,
                                           etcdserverpb::LeaseKeepAliveResponse>>
      rw;
  std::thread reader;
  // Guarded by the owner's mu_:
  Clock::time_point pending_send{};
  std::optional<Clock::time_point> blocking_until;  // a blocking call runs; cancel at this instant
  bool broken = false;      // Read() returned false
  bool timed_out = false;   // the watchdog cancelled a blocking call
  bool lease_gone = false;  // etcd answered TTL <= 0
};

Result<std::unique_ptr<LeaseKeepAlive>> LeaseKeepAlive::start(Client& client, std::int64_t lease_id,
                                                              std::int64_t ttl_seconds, LostHandler on_lost) {
  if (ttl_seconds < 1) return Status(ErrorCode::kInvalidArgument, "etcd lease ttl must be >= 1 second");
  std::unique_ptr<LeaseKeepAlive> self(new LeaseKeepAlive(client, lease_id, ttl_seconds, std::move(on_lost)));
  std::unique_lock lock(self->mu_);
  self->cv_.wait_until(lock, self->start_deadline_,
                       [&] { return self->answered_rounds_ > 0 || self->lost_.load(); });
  if (self->lost_.load()) {
    return Status(ErrorCode::kSessionExpired,
                  "etcd lease " + std::to_string(lease_id) + " is gone (expired or revoked)");
  }
  if (self->answered_rounds_ == 0) {
    return Status(ErrorCode::kUnavailable,
                  "etcd unavailable: first keepalive of lease " + std::to_string(lease_id) + " got no answer");
  }
  return self;
}

LeaseKeepAlive::LeaseKeepAlive(Client& client, std::int64_t lease_id, std::int64_t ttl_seconds,
                               LostHandler on_lost)
    : client_(client),
      lease_id_(lease_id),
      ttl_seconds_(ttl_seconds),
      start_deadline_(Clock::now() + client.call_timeout()),
      on_lost_(std::move(on_lost)) {
  watchdog_thread_ = std::thread([this] { watchdog(); });
  thread_ = std::thread([this] { run(); });
}

LeaseKeepAlive::~LeaseKeepAlive() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (stream_ != nullptr) stream_->context.TryCancel();
  }
  cv_.notify_all();
  thread_.join();
  watchdog_thread_.join();
}

Clock::time_point LeaseKeepAlive::safe_deadline() const {
  std::lock_guard lock(mu_);
  return safe_deadline_;
}

bool LeaseKeepAlive::should_stop() {
  std::lock_guard lock(mu_);
  return stopping_ || lost_.load();
}

Clock::time_point LeaseKeepAlive::horizon_locked() const {
  return answered_rounds_ > 0 ? safe_deadline_ : start_deadline_;
}

Clock::time_point LeaseKeepAlive::attempt_deadline_locked() const {
  const Clock::time_point now = Clock::now();
  const Clock::duration left = std::max(horizon_locked() - now, Clock::duration::zero());
  Clock::duration budget = std::max<Clock::duration>(left / 4, std::min<Clock::duration>(left, kMinAttempt));
  budget = std::min<Clock::duration>(budget, client_.call_timeout());
  return now + budget;
}

template <typename Call>
auto LeaseKeepAlive::guarded(Stream& stream, Clock::time_point deadline, Call&& call) {
  {
    std::lock_guard lock(mu_);
    stream.blocking_until = deadline;
  }
  cv_.notify_all();
  auto result = call();
  std::lock_guard lock(mu_);
  stream.blocking_until.reset();
  return result;
}

void LeaseKeepAlive::watchdog() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (stream_ != nullptr && stream_->blocking_until) {
      if (Clock::now() >= *stream_->blocking_until) {
        stream_->blocking_until.reset();
        stream_->timed_out = true;
        stream_->context.TryCancel();  // the blocking call returns with an error
        continue;
      }
      // A copy: the stream (and its optional) may be gone when the wait
      // returns and wait_until reads its deadline again (ASan caught it).
      const Clock::time_point until = *stream_->blocking_until;
      cv_.wait_until(lock, until);
    } else {
      cv_.wait(lock);
    }
  }
}

void LeaseKeepAlive::report_lost(const Status& why) {
  bool started = false;
  {
    std::lock_guard lock(mu_);
    if (lost_.load()) return;
    lost_.store(true);
    started = answered_rounds_ > 0;
  }
  cv_.notify_all();
  // Before the first answer, start() reports the failure itself.
  if (started && on_lost_) on_lost_(why);
}

void LeaseKeepAlive::run() {
  detail::Connections& connections = client_.connections();
  std::size_t index = connections.current();
  // Per member: time its failed attempts cost since it last answered.
  std::vector<Clock::duration> wasted(connections.size(), Clock::duration::zero());
  while (!should_stop()) {
    const StreamResult result = run_stream(index);
    const StreamEnd end = result.end;
    if (end == StreamEnd::kStopped || should_stop()) break;
    wasted[index] = (result.answered ? Clock::duration::zero() : wasted[index]) + result.failed_attempt;
    if (end == StreamEnd::kBroken) wasted[index] += kRefusedPause;
    index = next_member(wasted, index, result.refused_by_member);
    std::unique_lock lock(mu_);
    if (Clock::now() >= horizon_locked()) {
      if (answered_rounds_ == 0) break;  // start() reports kUnavailable
      lock.unlock();
      report_lost(Status(ErrorCode::kUnavailable, "etcd unavailable: keepalives of lease " +
                                                      std::to_string(lease_id_) +
                                                      " got no answer until its deadline passed"));
      break;
    }
    if (end == StreamEnd::kBroken) {
      cv_.wait_until(lock, std::min(Clock::now() + kRefusedPause, horizon_locked()), [&] { return stopping_; });
    }
  }
}

std::size_t LeaseKeepAlive::next_member(const std::vector<Clock::duration>& wasted, std::size_t failed,
                                        bool failed_may_retry) {
  const std::size_t n = wasted.size();
  std::size_t best = (failed + 1) % n;
  // In rotation order; `failed` itself comes last, and only if it refused at once.
  for (std::size_t k = 2; k <= (failed_may_retry ? n : n - 1); ++k) {
    const std::size_t candidate = (failed + k) % n;
    if (wasted[candidate] < wasted[best]) best = candidate;
  }
  return best;
}

LeaseKeepAlive::StreamResult LeaseKeepAlive::run_stream(std::size_t endpoint_index) {
  detail::Endpoint& ep = client_.connections().endpoint(endpoint_index);
  Stream stream;
  stream.context.AddMetadata("hasleader", "true");
  const Clock::time_point token_start = Clock::now();
  auto token = client_.connections().stream_token();  // cached but after a refusal
  if (!token) return {StreamEnd::kBroken, false, false, Clock::now() - token_start};
  detail::Auth::attach(stream.context, *token);
  Clock::time_point deadline;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return {};
    stream_ = &stream;
    deadline = attempt_deadline_locked();  // the first attempt includes the setup
  }
  stream.stubs = ep.stubs();
  stream.rw = guarded(stream, deadline, [&] { return stream.stubs->lease->LeaseKeepAlive(&stream.context); });
  stream.reader = std::thread([this, &stream, &ep] {
    etcdserverpb::LeaseKeepAliveResponse response;
    while (stream.rw->Read(&response)) {
      // An answer of another etcd cluster (etcd/connections.h) says nothing
      // about our lease: the stream counts as broken.
      if (!client_.connections().check_cluster(response.header().cluster_id(), "lease keepalive", ep.target())) break;
      std::lock_guard lock(mu_);
      if (response.ttl() <= 0) {
        stream.lease_gone = true;
      } else {
        safe_deadline_ = std::max(safe_deadline_, stream.pending_send + std::chrono::seconds(response.ttl()));
        ++answered_rounds_;
        acks_.fetch_add(1);
      }
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    stream.broken = true;
    cv_.notify_all();
  });

  const auto interval = std::chrono::milliseconds(ttl_seconds_ * 1000 / 10);
  StreamEnd end = StreamEnd::kStopped;
  bool answered = false;
  Clock::time_point attempt_start = Clock::now();
  while (true) {
    const RoundEnd result = round(stream, deadline);
    if (result != RoundEnd::kAnswered) {
      std::lock_guard lock(mu_);
      end = stopping_                                              ? StreamEnd::kStopped
            : result == RoundEnd::kFailed && !stream.timed_out ? StreamEnd::kBroken
                                                                 : StreamEnd::kTimedOut;
      break;
    }
    answered = true;
    client_.connections().mark_good(endpoint_index);
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, std::min(stream.pending_send + interval, safe_deadline_),
                   [&] { return stopping_ || stream.broken; });
    if (stopping_) break;
    if (stream.broken) {
      end = StreamEnd::kBroken;
      break;
    }
    attempt_start = Clock::now();
    deadline = attempt_deadline_locked();
  }
  Clock::duration failed_attempt = Clock::now() - attempt_start;
  const bool connected = stream.stubs->channel->GetState(false) == GRPC_CHANNEL_READY;
  if (end == StreamEnd::kBroken && !connected) {
    // Not even connected (refused, or no HTTP/2 handshake: e.g. a frozen
    // member on a fresh channel): as costly as a timeout.
    failed_attempt = std::max(failed_attempt, deadline - attempt_start);
  }

  bool gone = false;
  {
    std::lock_guard lock(mu_);
    stream_ = nullptr;
    gone = stream.lease_gone;
  }
  stream.context.TryCancel();
  stream.reader.join();
  if (detail::Auth::needs_new_token(stream.rw->Finish())) client_.connections().auth().invalidate(*token);
  if (gone) {
    report_lost(Status(ErrorCode::kSessionExpired,
                       "etcd lease " + std::to_string(lease_id_) + " is gone (expired or revoked)"));
  }
  return {end, answered, end == StreamEnd::kBroken && connected, failed_attempt};
}

LeaseKeepAlive::RoundEnd LeaseKeepAlive::round(Stream& stream, Clock::time_point deadline) {
  std::int64_t before = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || stream.broken) return RoundEnd::kFailed;
    if (Clock::now() >= deadline) return RoundEnd::kNoAnswer;
    stream.pending_send = Clock::now();
    before = answered_rounds_;
  }
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease_id_);
  const bool written = guarded(stream, deadline, [&] { return stream.rw->Write(request); });
  std::unique_lock lock(mu_);
  if (!written) return stream.timed_out ? RoundEnd::kNoAnswer : RoundEnd::kFailed;
  cv_.wait_until(lock, deadline, [&] {
    return stopping_ || stream.broken || stream.lease_gone || answered_rounds_ > before;
  });
  if (answered_rounds_ > before && !stream.lease_gone && !stopping_) return RoundEnd::kAnswered;
  return stopping_ || stream.broken || stream.lease_gone ? RoundEnd::kFailed : RoundEnd::kNoAnswer;
}

}  // namespace leasehold::etcd
