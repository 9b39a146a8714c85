// core/reply.h: what applying a command returns: a reply to the proposer and
// effects for the layers above (whom to wake, whom to notify, what to time).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/types.h"
#include "leasehold/status.h"

namespace leasehold::core {

enum class ReplyCode : std::uint8_t {
  kOk = 0,
  kQueued,      // Acquire with wait: queued; a Granted effect follows later
  kError,       // see Reply::error; the state did not change
};

struct Reply {
  ReplyCode code = ReplyCode::kOk;
  Status error;                       // non-OK iff code == kError
  Token token = 0;                    // grants, FencePut, CompatSet
  SessionId session = 0;              // OpenSession
  std::uint64_t count = 0;            // CompatDelete: keys deleted
  std::optional<std::string> value;   // CompatSet with return_old

  static Reply ok() { return {}; }
  static Reply fail(ErrorCode code, std::string message) {
    Reply r;
    r.code = ReplyCode::kError;
    r.error = Status(code, std::move(message));
    return r;
  }
  bool is_error() const { return code == ReplyCode::kError; }
  friend bool operator==(const Reply&, const Reply&) = default;
};

// A queued waiter now holds the lock. `seq` is the Acquire's idempotence seq
// (0 if it had none).
struct Granted {
  std::string lock;
  SessionId session = 0;
  std::uint64_t seq = 0;
  Token token = 0;
  friend bool operator==(const Granted&, const Granted&) = default;
};

enum class LossReason : std::uint8_t {
  kExpired = 0, kKilled, kRevoked, kClosed, kReplaced, kReleasedByOther,
  kLeaseEnded,   // EndLease: the grant's lease (max hold) ended
  kTransferred,  // Transfer: the grant moved to another session
};

// A holder lost a lock without releasing it (session expired/killed/closed,
// lock revoked, compat key overwritten, released by a request that was not
// the holder's own: Release::by_other).
struct LockLost {
  std::string lock;
  SessionId session = 0;
  Token token = 0;
  LossReason reason = LossReason::kExpired;
  friend bool operator==(const LockLost&, const LockLost&) = default;
};

enum class WaitEndReason : std::uint8_t { kTimedOut = 0, kCancelled, kSessionEnded, kRevoked };

// A queued wait ended without a grant; the blocked request gets nil/error.
struct WaitEnded {
  std::string lock;
  SessionId session = 0;
  std::uint64_t seq = 0;
  WaitEndReason reason = WaitEndReason::kTimedOut;
  friend bool operator==(const WaitEnded&, const WaitEnded&) = default;
};

enum class SessionEndReason : std::uint8_t { kClosed = 0, kExpired, kKilled };

struct SessionEnded {
  SessionId session = 0;
  SessionEndReason reason = SessionEndReason::kClosed;
  friend bool operator==(const SessionEnded&, const SessionEnded&) = default;
};

// A new session exists (OpenSession, CompatSet): the primary starts its timer.
struct SessionStarted {
  SessionId session = 0;
  std::uint64_t ttl_ms = 0;  // 0 = never expires (compat key without PX)
  friend bool operator==(const SessionStarted&, const SessionStarted&) = default;
};

// A session's TTL changed (SetSessionTtl): the primary restarts its timer.
struct SessionTtlChanged {
  SessionId session = 0;
  std::uint64_t ttl_ms = 0;
  friend bool operator==(const SessionTtlChanged&, const SessionTtlChanged&) = default;
};

// A queued wait with a deadline: the primary proposes TimeoutWait at `at`.
struct WaitDeadline {
  std::string lock;
  SessionId session = 0;
  LogMillis at = 0;
  friend bool operator==(const WaitDeadline&, const WaitDeadline&) = default;
};

// A lock-delay ends at `at`: the primary proposes Tick at or after it.
struct WakeAt {
  LogMillis at = 0;
  friend bool operator==(const WakeAt&, const WakeAt&) = default;
};

// A grant with a lease (Acquire::lease_ms, ExtendLease, Transfer): the
// primary proposes EndLease{lock, session, token} at or after `at` (log
// clock). A later LeaseDeadline for the same (lock, session) replaces it.
struct LeaseDeadline {
  std::string lock;
  SessionId session = 0;
  Token token = 0;
  LogMillis at = 0;
  friend bool operator==(const LeaseDeadline&, const LeaseDeadline&) = default;
};

using Effect = std::variant<Granted, LockLost, WaitEnded, SessionEnded, SessionStarted,
                            SessionTtlChanged, WaitDeadline, WakeAt, LeaseDeadline>;

struct ApplyResult {
  Reply reply;
  std::vector<Effect> effects;  // in the order they happened
};

}  // namespace leasehold::core
