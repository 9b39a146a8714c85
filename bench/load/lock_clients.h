// bench/load/lock_clients.h: the per-client lock loops of the load driver.
//
// A LockClient runs one lock cycle per step(): acquire a lock, then release
// it with the returned token/value. Two implementations:
//
//   LeaseholdLockClient  SESSION.OPEN once (setup), then per step
//                        LOCK.ACQUIRE name session [WAIT 0] -> token and
//                        LOCK.RELEASE name session token; SESSION.CLOSE at the end.
//                        With WAIT 0 the server queues the client (FIFO
//                        hand-off) and the reply arrives when it is granted.
//                        PIPELINED (`pipeline`): the RELEASE and the next
//                        cycle's ACQUIRE go out in one write, so the server
//                        commits both in one batch (one durable write per
//                        cycle instead of two); the reply to that ACQUIRE is
//                        read by the next step(). finish() reads a pending
//                        grant and releases it before SESSION.CLOSE.
//   RedisLockClient      SET key <random> NX PX lease, retried after
//                        `retry_delay` while it returns nil (the spin-lock of
//                        redis-py / Redlock-style client libraries), then the
//                        standard compare-and-delete EVAL script.
//
// step() returns true when one acquire+release cycle completed, false when
// `give_up` passed before the lock could be taken (spin-lock only), and an
// error Status when a reply was not what the protocol promises (the message
// quotes the reply). After an error the client is unusable.
//
// Latency: every implementation stamps its cycle (mark_acquire_sent() before
// the first acquire attempt goes out, mark_granted() when the lock is held,
// mark_release_sent() before the release goes out). acquire_latency() is
// ACQUIRE sent -> granted; handoff_latency() is the previous holder's
// release sent -> this grant, through the cell's shared release clock (W2).
//
// Ownership: each client owns its connection. Thread-safety: none; one thread
// per client (the release clock is an atomic shared by the cell's clients).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/load/resp_connection.h"
#include "leasehold/status.h"

namespace leasehold::bench {

using Clock = std::chrono::steady_clock;

class LockClient {
 public:
  virtual ~LockClient() = default;
  // Before the measured window (e.g. open the session).
  virtual Status setup() = 0;
  virtual Result<bool> step(Clock::time_point give_up) = 0;
  // After the window (e.g. close the session). Best effort.
  virtual Status finish() = 0;

  // W2: the clock every client of the cell publishes its release time to
  // (steady_clock nanoseconds, 0 = none yet), so that the next holder can
  // time the hand-off. Null (the default): no hand-off latency.
  void set_release_clock(std::atomic<std::int64_t>* clock) { release_clock_ = clock; }
  // Of the cycle step() completed last: ACQUIRE sent -> granted.
  std::chrono::nanoseconds acquire_latency() const { return acquire_latency_; }
  // Of the cycle step() completed last: the previous holder's release sent ->
  // this grant; negative when unknown (no release clock, or the first grant).
  std::chrono::nanoseconds handoff_latency() const { return handoff_; }

 protected:
  void mark_acquire_sent() { acquire_sent_ = Clock::now(); }
  void mark_granted();
  void mark_release_sent();

 private:
  std::atomic<std::int64_t>* release_clock_ = nullptr;
  Clock::time_point acquire_sent_{};
  std::chrono::nanoseconds acquire_latency_{0};
  std::chrono::nanoseconds handoff_{-1};
};

class LeaseholdLockClient final : public LockClient {
 public:
  // `wait`: send WAIT 0 (block until granted) instead of trying once.
  // `pipeline`: send each RELEASE together with the next ACQUIRE.
  LeaseholdLockClient(RespConnection conn, std::string lock_name, std::string owner,
                      std::int64_t session_ttl_ms, bool wait, bool pipeline);
  Status setup() override;
  Result<bool> step(Clock::time_point give_up) override;
  Status finish() override;

 private:
  std::vector<std::string_view> acquire_command() const;
  Result<std::string> read_grant();  // the token of the ACQUIRE sent last
  Status read_release_ok();

  std::string lock_name_;
  std::string owner_;
  std::string ttl_text_;
  RespConnection conn_;
  bool wait_;
  bool pipeline_;
  bool acquire_pending_ = false;  // pipelined: an ACQUIRE was sent, reply unread
  std::string session_;  // decimal id from SESSION.OPEN
};

class RedisLockClient final : public LockClient {
 public:
  // `retry_delay` zero: retry at once (a pure spin).
  RedisLockClient(RespConnection conn, std::string key, std::int64_t lease_ms,
                  std::chrono::microseconds retry_delay, std::uint64_t seed);
  Status setup() override { return Status::ok(); }
  Result<bool> step(Clock::time_point give_up) override;
  Status finish() override { return Status::ok(); }

 private:
  RespConnection conn_;
  std::string key_;
  std::string lease_text_;
  std::chrono::microseconds retry_delay_;
  std::mt19937_64 rng_;
};

// The compare-and-delete release script used by Redis lock libraries.
inline constexpr const char* kRedisReleaseScript =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) "
    "else return 0 end";

}  // namespace leasehold::bench
