// etcd/keepalive.h: keeps one etcd lease alive from a background thread.
//
// The runner holds a LeaseKeepAlive bidi stream on one member (with etcd's
// "hasleader" metadata, so a member that lost its leader refuses it) and
// sends one keepalive every TTL/10, one at a time. Each answer extends the
// safe deadline D to (send time of that keepalive + TTL returned by etcd),
// on the monotonic clock: until then the lease certainly exists.
//
// ATTEMPTS. Every keepalive (an "attempt") has its own deadline, computed
// from L = time left until D (before the first answer: until start()'s
// deadline): budget = min(call timeout, max(L/4, min(L, 250 ms))). Stream
// setup (channel connect, stream creation) and the write count against the
// same budget: a watchdog thread cancels the stream when a blocking gRPC
// call outlives it. An attempt that gets no answer in time (member frozen,
// partitioned, or a follower stuck forwarding to a frozen leader) or whose
// stream breaks closes that stream, and the next attempt starts at once on
// another member, on a fresh stream. Attempts repeat until one is answered
// or D passes. Budgets shrink with L, so the last second before D holds
// several short attempts rather than one long one.
// Which member next: the member that just failed is skipped (unless a
// connected member refused the stream at once, e.g. "no leader" during an
// election: it is alive and is tried again after 50 ms). Among the others,
// in rotation order, the one whose failed attempts cost the least time
// since it last answered wins; a member that could not even be connected
// costs a full budget. So a frozen member, which costs a full budget each
// time, is tried less and less, and a cluster that is down is not spun on
// (each refusal waits 50 ms).
//
// TIMING (T = TTL, I = T/10; numbers for T = 3 s, etcd election timeout
// 1 s, answers in under 100 ms):
//   - Steady state: D - now >= T - I - answer time (about 2.6 s).
//   - One frozen FOLLOWER (worst case: it carries our stream and froze just
//     after answering a send at s0, so D = s0 + T): the round at s0 + I gets
//     budget (T - I)/4 = 0.675 s; at s0 + 0.975 the next member, which has a
//     leader, answers; D moves to about s0 + 4. 2 s of the 3 s are unused.
//   - One frozen LEADER: no member can renew until the two others elected a
//     new leader (at most 2 election timeouts after its last heartbeat,
//     typically 1-1.5 s); until then followers hold keepalives while they
//     forward them to the frozen leader, so those attempts time out too.
//     With the freeze at F >= s0 (last answered send s0, D = s0 + 3), the
//     attempts (if all time out) start at about s0 + 0.3, 0.98, 1.48, 1.86,
//     2.15, 2.40, 2.65, 2.90; after the election at most the attempt under
//     way runs out on a stuck follower and one more on the frozen member
//     before a live member answers, within 250 + 250 ms + answer time (the
//     frozen member, having cost the most, is usually skipped). So the
//     lease survives if the election ends by about D - 0.6 s, i.e. within
//     2.1 s of the freeze even when the freeze came right before a round
//     (F = s0 + I). No client can survive an election that outlasts D: an
//     unanswered lease cannot be known to exist. (The new etcd leader
//     extends every lease by TTL + election timeout on promotion, so etcd
//     does not expire it meanwhile.) Measured under `stress-ng --cpu 2` on
//     2 cores (tests/etcd/cluster_test.cc, 18 runs): least lease time left
//     0.45-1.5 s (typically 1.1 s) with a frozen leader, 1.95-2.02 s with a
//     frozen follower (the earlier fixed 1 s rounds left about 0.87 s).
//   Rule of thumb: T >= 3 x the etcd election timeout survives one frozen
//   member of any role (an election with a split vote can take two
//   election timeouts or more); a shorter T survives a frozen follower.
//
// The lease is reported lost, once, through `on_lost` and lost() when etcd
// answers TTL <= 0 (expired or revoked: kSessionExpired) or the safe
// deadline passes without an answer (kUnavailable). The runner then stops;
// a lost lease never comes back.
//
// With etcd authentication (ClientOptions::user) each stream carries the
// token of etcd/auth.h; a stream that etcd ends for its token drops it and
// the next stream authenticates again (a unary call within the client's
// call timeout, counted against that attempt's member).
//
// A reader thread blocked on the stream takes turns as gRPC's poller (about
// 2.8 context switches per command on a busy primary); reading each answer
// within its round instead changed no rate (x1.02, x0.97), so it stays.
//
// Thread-safety: lost(), safe_deadline() and lease_id() are safe from any
// thread. `on_lost` runs on the runner thread; it must not destroy the
// LeaseKeepAlive. The destructor stops the threads (it does not revoke the
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
#include <vector>

#include "etcd/client.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

class LeaseKeepAlive {
 public:
  using LostHandler = std::function<void(const Status& why)>;

  // Smallest budget of one attempt while time is left (see ATTEMPTS).
  static constexpr std::chrono::milliseconds kMinAttempt{250};
  // Pause before the next member after a stream that was refused at once.
  static constexpr std::chrono::milliseconds kRefusedPause{50};

  // Sends the first keepalive synchronously (within the client's call
  // timeout, trying the members in turn), then continues in the background.
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
  enum class StreamEnd : std::uint8_t { kStopped, kTimedOut, kBroken };
  // kNoAnswer: the deadline passed; kFailed: the stream broke, the lease is gone, or stop.
  enum class RoundEnd : std::uint8_t { kAnswered, kNoAnswer, kFailed };
  LeaseKeepAlive(Client& client, std::int64_t lease_id, std::int64_t ttl_seconds, LostHandler on_lost);
  void run();
  // The member to try after `failed`: the first in rotation order among
  // those whose failed attempts cost the least time since they last
  // answered (see ATTEMPTS). `failed` itself comes last, and only if
  // `failed_may_retry` (it refused at once: it is alive).
  static std::size_t next_member(const std::vector<std::chrono::steady_clock::duration>& wasted,
                                 std::size_t failed, bool failed_may_retry);
  struct StreamResult {
    StreamEnd end = StreamEnd::kStopped;
    bool answered = false;                                // some keepalive on it was answered
    bool refused_by_member = false;                       // a connected member ended it at once
    std::chrono::steady_clock::duration failed_attempt{};  // how long the last (failed) attempt took
  };
  // One stream's life: returns when an attempt failed, the lease was lost or on stop.
  StreamResult run_stream(std::size_t endpoint_index);
  // Sends one keepalive and waits for its answer until `deadline`.
  RoundEnd round(Stream& stream, std::chrono::steady_clock::time_point deadline);
  // Deadline of an attempt starting now (see ATTEMPTS). Requires mu_.
  std::chrono::steady_clock::time_point attempt_deadline_locked() const;
  // The instant by which an answer is needed: D, or start()'s deadline. Requires mu_.
  std::chrono::steady_clock::time_point horizon_locked() const;
  // Runs `call` (a blocking gRPC call on `stream`); the watchdog cancels the
  // stream if it is still running at `deadline`.
  template <typename Call>
  auto guarded(Stream& stream, std::chrono::steady_clock::time_point deadline, Call&& call);
  void watchdog();
  void report_lost(const Status& why);
  bool should_stop();

  Client& client_;
  const std::int64_t lease_id_;
  const std::int64_t ttl_seconds_;
  const std::chrono::steady_clock::time_point start_deadline_;
  LostHandler on_lost_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point safe_deadline_;
  std::int64_t answered_rounds_ = 0;  // guarded by mu_
  Stream* stream_ = nullptr;          // guarded by mu_, for cancel on stop and by the watchdog
  std::atomic<bool> lost_{false};
  std::atomic<std::int64_t> acks_{0};
  std::thread watchdog_thread_;
  std::thread thread_;
};

}  // namespace leasehold::etcd
