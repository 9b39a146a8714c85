#include "etcd/watcher.h"

#include "etcd/connections.h"
#include "etcd/convert.h"

namespace leasehold::etcd {

using Clock = std::chrono::steady_clock;

struct Watcher::Stream {
  std::shared_ptr<const detail::Stubs> stubs;  // first: outlives the call below
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>> rw;
};

Result<std::unique_ptr<Watcher>> Watcher::start(Client& client, WatchOptions options, EventsHandler on_events,
                                                FailureHandler on_failure) {
  if (options.key.empty()) return Status(ErrorCode::kInvalidArgument, "etcd watch key must not be empty");
  if (options.start_revision < 0) {
    return Status(ErrorCode::kInvalidArgument, "etcd watch start revision must be >= 0");
  }
  if (!on_events) return Status(ErrorCode::kInvalidArgument, "etcd watch needs an events handler");
  std::unique_ptr<Watcher> self(
      new Watcher(client, std::move(options), std::move(on_events), std::move(on_failure)));
  std::unique_lock lock(self->mu_);
  self->cv_.wait_for(lock, client.call_timeout(), [&] { return self->created_ || self->failed_.load(); });
  if (!self->created_ && !self->failed_.load()) {
    return Status(ErrorCode::kUnavailable, "etcd unavailable: watch on '" + self->options_.key +
                                               "' was not confirmed within the call timeout");
  }
  return self;
}

Watcher::Watcher(Client& client, WatchOptions options, EventsHandler on_events, FailureHandler on_failure)
    : client_(client),
      options_(std::move(options)),
      on_events_(std::move(on_events)),
      on_failure_(std::move(on_failure)) {
  next_revision_.store(options_.start_revision);
  thread_ = std::thread([this] { run(); });
}

Watcher::~Watcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (stream_ != nullptr) stream_->context.TryCancel();
  }
  cv_.notify_all();
  thread_.join();
}

void Watcher::fail(const WatchFailure& failure) {
  {
    std::lock_guard lock(mu_);
    failed_.store(true);
  }
  cv_.notify_all();
  if (on_failure_) on_failure_(failure);
}

void Watcher::run() {
  std::size_t index = client_.connections().current();
  while (true) {
    const StreamEnd end = run_stream(index);
    if (end != StreamEnd::kBroken) return;
    index = (index + 1) % client_.connections().size();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) return;
  }
}

Watcher::StreamEnd Watcher::run_stream(std::size_t endpoint_index) {
  detail::Endpoint& ep = client_.connections().endpoint(endpoint_index);
  Stream stream;
  stream.context.AddMetadata("hasleader", "true");
  {
    std::lock_guard lock(mu_);
    if (stopping_) return StreamEnd::kStopped;
    stream_ = &stream;
  }
  struct Unregister {
    Watcher* self;
    ~Unregister() {
      std::lock_guard lock(self->mu_);
      self->stream_ = nullptr;
    }
  } unregister{this};

  auto token = client_.connections().stream_token();
  if (!token) return StreamEnd::kBroken;  // retried on the next endpoint
  detail::Auth::attach(stream.context, *token);
  stream.stubs = ep.stubs();
  stream.rw = stream.stubs->watch->Watch(&stream.context);
  const std::int64_t resume_from = next_revision_.load();
  etcdserverpb::WatchRequest request;
  auto* create = request.mutable_create_request();
  create->set_key(options_.key);
  if (!options_.range_end.empty()) create->set_range_end(options_.range_end);
  create->set_start_revision(resume_from);
  StreamEnd end = StreamEnd::kBroken;
  if (stream.rw->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (stream.rw->Read(&response)) {
      // An answer of another etcd cluster (etcd/connections.h): not ours to deliver.
      if (!client_.connections().check_cluster(response.header().cluster_id(), "watch", ep.target())) {
        break;
      }
      if (response.compact_revision() != 0) {
        fail({Status(ErrorCode::kNotFound, "etcd watch on '" + options_.key + "': revision " +
                                               std::to_string(next_revision_.load()) +
                                               " was compacted; oldest available is " +
                                               std::to_string(response.compact_revision())),
              response.compact_revision()});
        end = StreamEnd::kFailed;
        break;
      }
      const bool denied = response.canceled() && response.cancel_reason().find("permission denied") != std::string::npos;
      detail::Auth& auth = client_.connections().auth();
      if (denied && auth.enabled() && !denied_once_) {
        denied_once_ = true;  // perhaps a stale token: renew it and watch again
        auth.invalidate(*token);
        break;
      }
      if (denied && auth.enabled()) {
        fail({Status(ErrorCode::kInternal, "etcd canceled the watch on '" + options_.key + "': " +
                                               response.cancel_reason() + " (etcd user '" + auth.user() +
                                               "' needs read permission on it)"),
              0});
        end = StreamEnd::kFailed;
        break;
      }
      if (response.canceled()) {
        fail({Status(ErrorCode::kInvalidArgument,
                     "etcd canceled the watch on '" + options_.key + "': " + response.cancel_reason()),
              0});
        end = StreamEnd::kFailed;
        break;
      }
      if (response.created()) {
        denied_once_ = false;
        client_.connections().mark_good(endpoint_index);
        if (resume_from == 0) next_revision_.store(response.header().revision() + 1);
        {
          std::lock_guard lock(mu_);
          created_ = true;
        }
        cv_.notify_all();
      }
      std::vector<WatchEvent> events;
      events.reserve(static_cast<std::size_t>(response.events_size()));
      for (const auto& event : response.events()) {
        if (event.kv().mod_revision() < next_revision_.load()) continue;  // already delivered
        WatchEvent out;
        out.type = event.type() == mvccpb::Event::DELETE ? WatchEvent::Type::kDelete : WatchEvent::Type::kPut;
        out.kv = detail::from_proto(event.kv());
        events.push_back(std::move(out));
      }
      if (!events.empty()) {
        on_events_(events);
        next_revision_.store(events.back().kv.mod_revision + 1);
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) end = StreamEnd::kStopped;
  }
  stream.context.TryCancel();
  etcdserverpb::WatchResponse drained;
  while (stream.rw->Read(&drained)) {
  }
  if (detail::Auth::needs_new_token(stream.rw->Finish())) client_.connections().auth().invalidate(*token);
  return end;
}

}  // namespace leasehold::etcd
