// leasehold/lock_guard.h: a held lock, released when the guard dies.
//
// LockGuard::acquire() waits (on the server, like BLPOP) up to `timeout` for
// the lock; try_acquire() asks once. Each request carries a fresh SEQ of the
// session; when the connection drops mid-call the request is re-sent with the
// SAME SEQ, so a lost reply can never acquire or enqueue twice (the server
// answers the retry with the first answer). A retry that finds the first
// wait already cancelled (nil) asks again with a new SEQ while time remains.
//
// A guard knows when its lock is lost: the session was lost (expired,
// killed, safe deadline passed, closed) or the lock was revoked or released
// by another connection's LOCK.RELEASE (`lost` push). It then reports lost() / !valid() / a non-OK status() and requests
// its stop_token; it never pretends to still hold. Holding a valid() guard
// means: the server granted `token()` and, as far as this client can know,
// no one else has been granted the lock since (until the session's safe
// deadline). Resources should still check the token (fencing).
//
// Errors of acquire / try_acquire:
//   kTimedOut        not granted within `timeout` (or an operator cancelled
//                    the wait with LOCK.CANCEL: the server answers both nil)
//   kWouldBlock      try_acquire: held by others now
//   kSessionExpired  the session is not live (or ended while waiting)
//   kConflict        mode mismatch with the current holders, already holding
//                    or waiting
//   kInvalidArgument bad name / limit; kUnreachable, kLimitExceeded, ...
//
// Ownership: the guard keeps the session's shared state alive; if the
// Session object is closed or destroyed first, the guard reports lost.
// Thread-safety: one guard is used by one thread at a time, except lost(),
// valid(), status() and stop_token(), which are safe from any thread.
// The destructor makes one bounded release attempt (ClientOptions::
// call_timeout at most) and skips it when the lock is already lost.
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "leasehold/client.h"
#include "leasehold/session.h"

namespace leasehold::client {

namespace detail {
class HeldLock;
}

struct LockOptions {
  LockMode mode = LockMode::kExclusive;
  std::uint32_t limit = 0;  // kSemaphore: number of permits (>= 1)
  Millis delay{0};          // lock-delay after this holder's session expires
  // LEASE: a maximum hold. The server ends the grant this long after it
  // granted it, even while the session lives (`lost` push, lease-ended);
  // safe_deadline() is then at most the request's send time + lease -
  // drift (the session's drift_factor x lease + drift_fixed). 0: none (a
  // server --max-hold may still impose one: the guard learns it from the
  // `lost` push).
  Millis lease{0};
};

class LockGuard {
 public:
  static Result<LockGuard> acquire(Session& session, std::string name, Millis timeout,
                                   LockOptions options = {});
  static Result<LockGuard> try_acquire(Session& session, std::string name,
                                       LockOptions options = {});

  LockGuard() = default;  // holds nothing
  LockGuard(LockGuard&& other) noexcept;
  LockGuard& operator=(LockGuard&& other) noexcept;
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;
  ~LockGuard();

  const std::string& name() const;
  std::uint64_t token() const;
  std::uint64_t session_id() const;

  // Held, not lost, and neither the session's safe deadline nor the lease's
  // has passed.
  bool valid() const;
  // min(session safe deadline, lease deadline) (see LockOptions::lease).
  Clock::time_point safe_deadline() const;
  // True once the lease's client-side deadline has passed (the hold ended).
  bool lease_over() const;
  bool lost() const;
  // OK while valid(); the reason otherwise (kNotHolder for a revoke or a
  // release by another,
  // kSessionExpired / kTimedOut for the session, kNotFound when released).
  Status status() const;
  // Requested when the lock is lost.
  std::stop_token stop_token() const;

  // Releases now (bounded, retried with the same SEQ after a lost reply).
  // OK also when the lock was already lost (nothing to release). Idempotent.
  Status release();

  // FENCE.PUT key value with this guard's lock and token. kStaleToken once
  // the lock has passed to someone else.
  Result<std::uint64_t> put(std::string_view key, std::string_view value);

  // LOCK.EXTEND: the lease now ends `lease` from now; safe_deadline() moves
  // to the send time + lease - drift. kConflict for a grant without a
  // lease; kNotHolder / kStaleToken once it ended; nothing changes then.
  Status extend(Millis lease);

  // LOCK.TRANSFER to session `to` (live; this user's, unless an admin):
  // returns the new holder's token. The guard then holds nothing (like
  // after release()). On an error the guard still holds.
  Result<std::uint64_t> transfer(std::uint64_t to);

 private:
  LockGuard(std::shared_ptr<detail::SessionState> session, std::shared_ptr<detail::HeldLock> held);

  std::shared_ptr<detail::SessionState> session_;
  std::shared_ptr<detail::HeldLock> held_;
};

}  // namespace leasehold::client
