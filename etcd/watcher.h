// etcd/watcher.h: one etcd watch on a key or key range, read by a
// background thread and delivered in revision order.
//
// Events are delivered through `on_events`, in etcd revision order, each
// revision exactly once even across reconnects: when the stream breaks
// (member down, member lost its leader: the stream carries etcd's
// "hasleader" metadata) the watch is re-created on the next endpoint from
// next_revision(), retrying every 100 ms until the Watcher is destroyed.
// A member that is frozen (SIGSTOP) or cut off without closing the socket
// is only noticed by gRPC's keepalive ping (6 s + 3 s timeout), so events can
// stall for up to ~10 s before the watch moves on (known limitation; etcd
// 3.4's progress requests could shorten it).
//
// The watch fails (terminally, `on_failure` once, then no more events)
// when etcd cancels it: the requested revision was compacted (status
// kNotFound, WatchFailure::compact_revision = the oldest revision still
// available; the caller must re-read state and watch from there) or another
// reason (kInvalidArgument with etcd's reason, e.g. a future revision).
//
// With etcd authentication (ClientOptions::user) each stream carries the
// token; etcd cancels a watch whose token is no longer valid as "permission
// denied", so the first such cancel renews the token and re-creates the
// watch; a second one in a row fails it (kInternal, naming the user).
//
// Thread-safety: next_revision() and failed() are safe from any thread.
// Callbacks run on the watcher thread, one at a time; they must not destroy
// the Watcher. The destructor cancels the watch and joins the thread; no
// callback runs after it returns.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "etcd/client.h"
#include "etcd/types.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

struct WatchEvent {
  enum class Type : std::uint8_t { kPut, kDelete };
  Type type = Type::kPut;
  // kPut: the key as written. kDelete: key and mod_revision (the deletion's
  // revision); value empty, create_revision 0.
  KeyValue kv;
};

struct WatchOptions {
  std::string key;
  std::string range_end;            // "" = just `key`; prefix_end(p) = prefix p
  std::int64_t start_revision = 0;  // first revision to deliver; 0 = changes after now
};

struct WatchFailure {
  Status status;
  std::int64_t compact_revision = 0;  // > 0 when the failure is a compaction
};

class Watcher {
 public:
  // One call per etcd response that carries events (all of one revision
  // are in the same call).
  using EventsHandler = std::function<void(const std::vector<WatchEvent>& events)>;
  using FailureHandler = std::function<void(const WatchFailure& failure)>;

  // Creates the watch and returns once etcd confirmed it (within the
  // client's call timeout). Errors: kInvalidArgument (empty key, no
  // handler, negative revision), kUnavailable (not confirmed in time).
  static Result<std::unique_ptr<Watcher>> start(Client& client, WatchOptions options,
                                                EventsHandler on_events, FailureHandler on_failure = {});
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Every event with a lower revision has been delivered (0 before the
  // watch was created from "now").
  std::int64_t next_revision() const { return next_revision_.load(); }
  bool failed() const { return failed_.load(); }

 private:
  struct Stream;
  enum class StreamEnd : std::uint8_t { kBroken, kFailed, kStopped };
  Watcher(Client& client, WatchOptions options, EventsHandler on_events, FailureHandler on_failure);
  void run();
  StreamEnd run_stream(std::size_t endpoint_index);
  void fail(const WatchFailure& failure);

  Client& client_;
  bool denied_once_ = false;  // watcher thread only: the last create was refused for permission
  const WatchOptions options_;
  EventsHandler on_events_;
  FailureHandler on_failure_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;    // guarded by mu_
  bool created_ = false;     // guarded by mu_
  Stream* stream_ = nullptr; // guarded by mu_
  std::atomic<std::int64_t> next_revision_{0};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace leasehold::etcd
