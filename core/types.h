// core/types.h: identifiers, lock modes and limits of the lock state machine.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/assert.h"

namespace leasehold::core {

// A session id is the state machine revision at which the session was opened,
// so it is unique and deterministic. 0 means "no session". A shard of a
// sharded namespace (DESIGN.md section 7; SetOwnedSlots) puts its shard id
// in the bits from kShardIdShift up, so an id names the shard that opened it:
// id = shard << kShardIdShift | revision. An unsharded state's ids are the
// revision alone (shard 0).
using SessionId = std::uint64_t;

// Shard ids are 1..kMaxShardId; they sit in bits 53..62, so every session id
// stays a positive signed 64-bit integer (a RESP integer).
inline constexpr unsigned kShardIdShift = 53;
inline constexpr std::uint32_t kMaxShardId = 1023;
inline constexpr std::uint64_t kSessionSerialMask = (std::uint64_t{1} << kShardIdShift) - 1;
// The shard that opened `id` (0: an unsharded state, or before the shard
// was recorded).
constexpr std::uint32_t shard_of_session(std::uint64_t id) {
  return static_cast<std::uint32_t>(id >> kShardIdShift);
}

// A fencing token is the state machine revision at which a grant was applied.
// Every successfully applied command bumps the revision by one, so tokens are
// unique and strictly increase across all locks.
using Token = std::uint64_t;
using Revision = std::uint64_t;

// The log clock: milliseconds on a monotonic timeline stamped on each command
// by the primary. It never goes backwards across the log (the primary keeps
// it >= the last stamped value, also across restarts and failovers). Core
// uses it only for display (held-for) and to schedule lock-delays; safety
// never depends on it.
using LogMillis = std::uint64_t;

enum class LockMode : std::uint8_t {
  kExclusive = 0,  // one holder
  kShared = 1,     // many readers together; a queued writer blocks later readers
  kSemaphore = 2,  // at most `limit` holders, granted in FIFO order
};

// Size and count limits. Breaking one yields kLimitExceeded and no change.
// The longest session TTL any configuration may allow: 2^31 - 1 ms, about
// 24.8 days. Session records keep a TTL in 31 bits (core/state.h,
// node/timers.h: ten million sessions must fit under 1.5 GB), so
// check_ttl refuses more whatever Limits::max_ttl_ms says, and the server
// refuses a --max-ttl-ms above it.
inline constexpr std::uint64_t kMaxSessionTtlMs = (std::uint64_t{1} << 31) - 1;

// A TTL that passed check_ttl (or the snapshot's check), as the session
// records keep it; over kMaxSessionTtlMs is a broken invariant and stops
// the process.
inline std::uint32_t session_ttl(std::uint64_t ttl_ms) {
  LEASEHOLD_ASSERT(ttl_ms <= kMaxSessionTtlMs, "session ttl {} ms over the largest, {} ms", ttl_ms, kMaxSessionTtlMs);
  return static_cast<std::uint32_t>(ttl_ms);
}

struct Limits {
  std::size_t max_name_bytes = 512;         // lock names and KV keys
  std::size_t max_owner_bytes = 256;        // session owner labels
  std::size_t max_value_bytes = 64 * 1024;  // fenced KV and compat values
  std::size_t max_sessions = 1'000'000;
  std::size_t max_locks = 1'000'000;        // locks that have holders or waiters
  std::size_t max_fence_keys = 1'000'000;
  std::size_t max_waiters_per_lock = 10'000;
  std::size_t max_holders_per_lock = 10'000;  // shared holders / semaphore permits
  std::uint64_t min_ttl_ms = 10;
  std::uint64_t max_ttl_ms = 24ULL * 3600 * 1000;  // at most kMaxSessionTtlMs takes effect
  std::uint64_t max_wait_ms = 24ULL * 3600 * 1000;
  std::uint64_t max_delay_ms = 3600ULL * 1000;
  // How many recent (seq -> reply) entries each session remembers for
  // idempotent retries. A retry of an older seq gets kInvalidArgument.
  std::size_t idempotence_window = 8;
  // SESSION.OPEN REQID: the retry key's length (printable ASCII).
  std::size_t max_reqid_bytes = 64;
};

// The session TTLs `lim` accepts, inclusive: check_ttl refuses every other
// (min_ttl_ms 0 counts as 1; max_ttl_ms is capped at kMaxSessionTtlMs).
struct TtlRange {
  std::uint64_t min_ms = 1;
  std::uint64_t max_ms = kMaxSessionTtlMs;
};
inline TtlRange accepted_ttls(const Limits& lim) {
  return {lim.min_ttl_ms == 0 ? 1 : lim.min_ttl_ms,
          lim.max_ttl_ms < kMaxSessionTtlMs ? lim.max_ttl_ms : kMaxSessionTtlMs};
}

}  // namespace leasehold::core
