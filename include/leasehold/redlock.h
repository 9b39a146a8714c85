// leasehold/redlock.h: the Redis Redlock algorithm over N independent
// servers, for EFFICIENCY locks only.
//
// WHY NO FENCING TOKEN, AND WHEN THIS IS ACCEPTABLE
// Redlock's lock value is random, not ordered: a resource cannot tell the
// current holder from a stale one. Its safety rests on timing assumptions:
// bounded process pauses and bounded clock drift on every server. A holder
// that pauses (GC, SIGSTOP, VM migration) past the validity time, or one
// server whose clock jumps forward so its key expires early, lets a second
// client win a majority while the first still believes it holds the lock;
// nothing then stops the first one's late writes (Kleppmann's critique;
// `leasehold demo redlock` shows both). Use Redlock only where two holders
// at once cost efficiency, never correctness (duplicate work that is
// harmless or idempotent). For correctness use a leasehold Session lock
// (LockGuard) and pass its fencing token to the resource.
//
// THE ALGORITHM (as the Redis docs and the seeds describe it)
//   1. a random value (20 random bytes, hex) and the start time (steady);
//   2. `SET key value NX PX ttl` on each server in turn, each bounded by
//      `server_timeout` so that a dead server does not eat the validity;
//   3. held if a majority (N/2 + 1) answered OK and the validity
//      ttl - elapsed - drift is positive, drift = 0.01 * ttl + 2 ms;
//   4. otherwise release on every server and retry after a random delay
//      in [0, retry_delay_max] (at most `retry_count` attempts).
// Release runs the compare-and-delete script (EVAL) on every server: it
// deletes the key only where it still holds our value. The servers may be
// Redis or leasehold (its compat keys run that script natively).
//
// Errors: create() kInvalidArgument for bad options. lock()/try_once()
// report "not held" as nullopt, not as an error; a server that fails or
// times out simply does not count.
// Thread-safety: one thread at a time per Redlock object (it keeps one
// connection per server).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/client.h"
#include "leasehold/status.h"

namespace leasehold::client {

struct RedlockOptions {
  std::vector<Endpoint> servers;        // independent servers, 1..64
  Millis server_timeout{100};           // one server's connect + reply
  int retry_count = 3;                  // attempts, >= 1
  Millis retry_delay_max{200};          // random pause between attempts
  std::function<Clock::time_point()> clock;  // empty: steady_clock::now (tests inject)
};

struct RedlockLease {
  std::string resource;
  std::string value;                    // the random value set on the servers
  Clock::time_point acquired_at;        // start of the winning attempt
  std::chrono::microseconds validity{0};
  std::vector<std::size_t> granted_by;  // indexes into RedlockOptions::servers
  Clock::time_point valid_until() const { return acquired_at + validity; }
};

// 0.01 * ttl + 2 ms.
std::chrono::microseconds redlock_drift(Millis ttl);
// ttl - elapsed - drift (negative: not held).
std::chrono::microseconds redlock_validity(Millis ttl, std::chrono::microseconds elapsed);

class Redlock {
 public:
  static Result<std::unique_ptr<Redlock>> create(RedlockOptions options);
  ~Redlock();
  Redlock(const Redlock&) = delete;
  Redlock& operator=(const Redlock&) = delete;

  std::size_t quorum() const;
  // One attempt; nullopt when not held (what it got is released first).
  std::optional<RedlockLease> try_once(std::string_view resource, Millis ttl);
  // Up to retry_count attempts with a random pause in between.
  std::optional<RedlockLease> lock(std::string_view resource, Millis ttl);
  // Releases on every server; returns how many still held our value.
  std::size_t unlock(const RedlockLease& lease);

 private:
  struct Impl;
  explicit Redlock(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::client
