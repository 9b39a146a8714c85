// etcd/keepalive.h: keeps one etcd lease alive from a background thread.
//
// The runner holds a LeaseKeepAlive bidi stream (with etcd's "hasleader"
// metadata, so a member that lost its leader closes it) and sends one
// keepalive every TTL/3, one at a time. Each answer extends the safe
// deadline to (send time of that keepalive + TTL returned by etcd), on the
// monotonic clock: until then the lease certainly exists. When a round gets
// no answer within min(call timeout, TTL/3) (member stopped or partitioned)
// or the stream breaks, the stream is reopened on the next endpoint.
//
// The lease is reported lost, once, through `on_lost` and lost() when etcd
// answers TTL <= 0 (expired or revoked: kSessionExpired) or the safe
// deadline passes without an answer (kUnavailable). The runner then stops;
// a lost lease never comes back.
//
// Thread-safety: lost(), safe_deadline() and lease_id() are safe from any
// thread. `on_lost` runs on the runner thread; it must not destroy the
// LeaseKeepAlive. The destructor stops the thread (it does not revoke the
// lease) and no callback runs after it returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "etcd/client.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

class LeaseKeepAlive {
 public:
  using LostHandler = std::function<void(const Status& why)>;

  // Sends the first keepalive synchronously (within the client's call
  // timeout), then continues in the background.
  // Errors: kInvalidArgument (ttl < 1), kSessionExpired (lease already
  // gone), kUnavailable (no member answered in time).
  static Result<std::unique_ptr<LeaseKeepAlive>> start(Client& client, std::int64_t lease_id,
                                                       std::int64_t ttl_seconds, LostHandler on_lost = {});
  ~LeaseKeepAlive();
  LeaseKeepAlive(const LeaseKeepAlive&) = delete;
  LeaseKeepAlive& operator=(const LeaseKeepAlive&) = delete;

  std::int64_t lease_id() const { return lease_id_; }
  bool lost() const { return lost_.load(); }
  // Until this instant the lease certainly exists (send time of the last
  // answered keepalive + its TTL).
  std::chrono::steady_clock::time_point safe_deadline() const;
  // Number of keepalives etcd has answered (for tests and metrics).
  std::int64_t acks() const { return acks_.load(); }

 private:
  struct Stream;
  LeaseKeepAlive(Client& client, std::int64_t lease_id, std::int64_t ttl_seconds, LostHandler on_lost);
  void run();
  // One stream's life: returns when it broke, the lease was lost or on stop.
  void run_stream(std::size_t endpoint_index);
  // Sends one keepalive and waits for its answer. False: no answer in time.
  bool round(Stream& stream);
  void report_lost(const Status& why);
  bool should_stop();

  Client& client_;
  const std::int64_t lease_id_;
  const std::int64_t ttl_seconds_;
  LostHandler on_lost_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point safe_deadline_;
  std::int64_t answered_rounds_ = 0;  // guarded by mu_
  Stream* stream_ = nullptr;          // guarded by mu_, for cancel on stop
  std::atomic<bool> lost_{false};
  std::atomic<std::int64_t> acks_{0};
  std::thread thread_;
};

}  // namespace leasehold::etcd
