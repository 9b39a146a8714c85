#include "etcd/keepalive.h"

#include <algorithm>

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
  bool broken = false;      // Read() returned false
  bool lease_gone = false;  // etcd answered TTL <= 0
};

Result<std::unique_ptr<LeaseKeepAlive>> LeaseKeepAlive::start(Client& client, std::int64_t lease_id,
                                                              std::int64_t ttl_seconds, LostHandler on_lost) {
  if (ttl_seconds < 1) return Status(ErrorCode::kInvalidArgument, "etcd lease ttl must be >= 1 second");
  std::unique_ptr<LeaseKeepAlive> self(new LeaseKeepAlive(client, lease_id, ttl_seconds, std::move(on_lost)));
  const Clock::time_point deadline = Clock::now() + client.call_timeout();
  std::unique_lock lock(self->mu_);
  self->cv_.wait_until(lock, deadline, [&] { return self->answered_rounds_ > 0 || self->lost_.load(); });
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
    : client_(client), lease_id_(lease_id), ttl_seconds_(ttl_seconds), on_lost_(std::move(on_lost)) {
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
}

Clock::time_point LeaseKeepAlive::safe_deadline() const {
  std::lock_guard lock(mu_);
  return safe_deadline_;
}

bool LeaseKeepAlive::should_stop() {
  std::lock_guard lock(mu_);
  return stopping_ || lost_.load();
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
  while (!should_stop()) {
    run_stream(index);
    if (should_stop()) break;
    index = (index + 1) % connections.size();
    std::unique_lock lock(mu_);
    const bool started = answered_rounds_ > 0;
    if (started && Clock::now() >= safe_deadline_) {
      lock.unlock();
      report_lost(Status(ErrorCode::kUnavailable, "etcd unavailable: keepalives of lease " +
                                                      std::to_string(lease_id_) +
                                                      " got no answer until its deadline passed"));
      break;
    }
    // Brief pause before the next endpoint (interrupted by stop).
    cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; });
  }
}

void LeaseKeepAlive::run_stream(std::size_t endpoint_index) {
  detail::Endpoint& ep = client_.connections().endpoint(endpoint_index);
  Stream stream;
  stream.context.AddMetadata("hasleader", "true");
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stream_ = &stream;
  }
  stream.stubs = ep.stubs();
  stream.rw = stream.stubs->lease->LeaseKeepAlive(&stream.context);
  stream.reader = std::thread([this, &stream] {
    etcdserverpb::LeaseKeepAliveResponse response;
    while (stream.rw->Read(&response)) {
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

  const auto interval = std::chrono::milliseconds(ttl_seconds_ * 1000 / 3);
  while (round(stream)) {
    client_.connections().mark_good(endpoint_index);
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, std::min(stream.pending_send + interval, safe_deadline_),
                   [&] { return stopping_ || stream.broken; });
    if (stopping_ || stream.broken) break;
    if (Clock::now() >= safe_deadline_) break;  // run() reports the loss
  }

  bool gone = false;
  {
    std::lock_guard lock(mu_);
    stream_ = nullptr;
    gone = stream.lease_gone;
  }
  stream.context.TryCancel();
  stream.reader.join();
  (void)stream.rw->Finish();
  if (gone) {
    report_lost(Status(ErrorCode::kSessionExpired,
                       "etcd lease " + std::to_string(lease_id_) + " is gone (expired or revoked)"));
  }
}

bool LeaseKeepAlive::round(Stream& stream) {
  const Clock::time_point sent = Clock::now();
  std::int64_t before = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || stream.broken) return false;
    stream.pending_send = sent;
    before = answered_rounds_;
  }
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease_id_);
  if (!stream.rw->Write(request)) return false;
  const auto timeout = std::min<std::chrono::milliseconds>(
      client_.call_timeout(), std::max<std::chrono::milliseconds>(std::chrono::milliseconds(ttl_seconds_ * 1000 / 3),
                                                                  std::chrono::milliseconds(500)));
  std::unique_lock lock(mu_);
  Clock::time_point until = sent + timeout;
  if (answered_rounds_ > 0) until = std::min(until, safe_deadline_);
  cv_.wait_until(lock, until, [&] {
    return stopping_ || stream.broken || stream.lease_gone || answered_rounds_ > before;
  });
  return !stopping_ && !stream.lease_gone && answered_rounds_ > before;
}

}  // namespace leasehold::etcd
