// core/command.h: the commands the lock state machine applies.
//
// A Command is what goes into the log: an envelope (the log-clock time the
// primary stamped and, for mutating client requests, the idempotence key
// (session, seq)) around one of the bodies below. Commands are plain values;
// encode/decode to bytes lives in core/command_codec.h.
//
// Idempotence: a command with seq != 0 is remembered per session. Applying
// the same (session, seq) again returns the first reply unchanged (with no
// effects and no state change), even when the first reply was an error or a
// queued wait that has since been granted (the reply then carries the grant).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/types.h"
#include "slots/slot_set.h"

namespace leasehold::core {

// --- sessions -------------------------------------------------------------

// Opens a session. Reply: session id. Not idempotent through seq (there is no
// session yet to key on); `reqid` makes it retry-safe instead: while a session
// opened by the same user with the same reqid is live, the open returns that
// session (no change, no effect). Without a reqid an orphan from a lost reply
// simply expires after its TTL.
// Errors: kInvalidArgument for a bad ttl, a close grace over the TTL or a
// reqid with bytes outside printable ASCII; kLimitExceeded for sizes.
struct OpenSession {
  std::uint64_t ttl_ms = 0;  // [limits.min_ttl_ms, limits.max_ttl_ms]
  std::string owner;         // free-form label, <= limits.max_owner_bytes
  // The authenticated user that opened it ("" when authentication is off),
  // <= limits.max_owner_bytes. Only that user (or an admin) may use the
  // session (server/security/acl.h); recorded here so standbys and restarts agree.
  // Encoded only when non-empty (older logs decode with user "").
  std::string user = {};
  // ONCLOSE: the session ends (ConnectionClosed) this long after the
  // connection bound to it closes; nullopt = no binding. <= ttl_ms. Part of
  // the session's state so a new primary knows it when a client re-binds.
  std::optional<std::uint32_t> close_grace_ms = {};
  // REQID: the retry key, <= limits.max_reqid_bytes, printable ASCII; "" = none.
  std::string reqid = {};
};

// Closes a session cleanly: releases its locks (no lock-delay, and no LockLost:
// the owner asked for it), drops its waits (WaitEnded), SessionEnded{kClosed}.
// Reply: kOk, or kSessionExpired if the session is not live.
struct CloseSession {
  SessionId session = 0;
};

// Proposed by the primary when the session's monotonic deadline passed.
// Releases its locks (applying each lock's lock-delay) and drops its waits.
struct ExpireSession {
  SessionId session = 0;
};

// Operator: like ExpireSession (lock-delay applies), reason "killed".
struct KillSession {
  SessionId session = 0;
};

// Changes a session's TTL (used by compat PEXPIRE). Reply: ok.
struct SetSessionTtl {
  SessionId session = 0;
  std::uint64_t ttl_ms = 0;
};

// --- locks ----------------------------------------------------------------

// Acquires `lock` for `session`.
// Reply: kOk with token when granted now; kQueued when `wait` and not
// grantable now (a later Granted effect carries the token); kWouldBlock when
// not `wait` and not grantable now.
// A lock is either a read-write lock (kExclusive writers and kShared readers
// mix on it: readers share, a writer is alone, a queued writer blocks readers
// that arrive after it) or a semaphore (every request kSemaphore with the same
// limit). Mixing the two kinds, or a different semaphore limit, is kConflict.
// A session that already holds or waits for the lock gets kConflict.
// Malformed (empty name, limit != 1 without kSemaphore, limit 0, wait_ms
// without wait, unknown mode) is kInvalidArgument; an unknown/ended session is
// kSessionExpired; a compat key's lock is kConflict.
struct Acquire {
  std::string lock;
  SessionId session = 0;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t limit = 1;     // semaphore permits; must be 1 unless kSemaphore
  bool wait = false;           // queue when not grantable now
  std::uint64_t wait_ms = 0;   // 0 = no deadline; else the primary proposes
                               // TimeoutWait after wait_ms (stored for recovery)
  std::uint64_t delay_ms = 0;  // lock-delay after this holder's session expires
  // 0 = no lease; else the grant ends after lease_ms (from the grant, on the
  // log clock) even if the session lives: the primary proposes EndLease
  // (effect LeaseDeadline). Over kMaxSessionTtlMs is kLimitExceeded.
  // An Acquire with a lease has a type of its own in the codec, so older
  // logs decode unchanged (no lease).
  std::uint64_t lease_ms = 0;
};

// Releases a lock held by `session` with exactly `token`.
// Reply: kOk; kStaleToken (and no change) if the session holds the lock with
// another token or the token is not the holder's; kNotHolder if it does not
// hold it.
// `by_other`: the request did not come from the holder itself (the server
// decides; see docs/protocol.md): the holder gets LockLost{kReleasedByOther}.
struct Release {
  std::string lock;
  SessionId session = 0;
  Token token = 0;
  bool by_other = false;
};

// Cancels `session`'s queued wait on `lock`. Reply: kOk or kNotFound.
struct CancelWait {
  std::string lock;
  SessionId session = 0;
};

// Proposed by the primary when a queued wait's deadline passed.
// Reply: kOk if it was still queued (effect WaitEnded{timed_out}), else kNotFound.
struct TimeoutWait {
  std::string lock;
  SessionId session = 0;
};

// Operator: removes every holder of `lock` (effect LockLost{revoked} for each,
// no lock-delay), then grants waiters. Reply: kOk or kNotFound.
struct Revoke {
  std::string lock;
};

// Proposed by the primary when a lock-delay it was told about (WakeAt) ended.
// Grants waiters of locks whose delay is over at the command's `now`.
struct Tick {};

// --- fenced key-value -----------------------------------------------------

// Writes `value` under `key` only if `token` is a current holder's token of
// `lock`. Reply: kOk with token; kStaleToken otherwise (no change).
struct FencePut {
  std::string key;
  std::string value;
  std::string lock;
  Token token = 0;
};

// --- Redis-compatible efficiency locks ------------------------------------
// A compat key is an exclusive lock named `key` held by an implicit session
// (owner "compat") whose TTL is the key's PX; the key's value is stored with
// it. Expiry is the session's expiry, proposed by the primary as usual.

enum class CompatCondition : std::uint8_t { kNone = 0, kIfAbsent = 1 /*NX*/, kIfPresent = 2 /*XX*/ };

// SET key value [NX|XX] [PX ttl_ms] [GET].
// Reply: kOk with token (the new grant's) and, with return_old, the old value
// (nullopt if there was none); kConflict when the condition fails (no change)
// or when `key` is held through LOCK.ACQUIRE. ttl_ms 0 = no expiry.
struct CompatSet {
  std::string key;
  std::string value;
  std::uint64_t ttl_ms = 0;
  CompatCondition condition = CompatCondition::kNone;
  bool return_old = false;
};

// DEL key / DELIFEQ key value. Reply: kOk with count 1 if deleted, 0 if not.
struct CompatDelete {
  std::string key;
  std::optional<std::string> if_value;  // DELIFEQ
};

// --- restarts ---------------------------------------------------------------

// Proposed by the node as the FIRST command after a start that cannot prove
// its log is complete (an unclean stop, or a recovery from a lost log; see
// node/revision_guard.h). Never sent by clients.
//  - revision_floor: the revision becomes at least this, so every later
//    token and session id is above every one that may have been handed out
//    before (the durable revision record's reserved block).
//  - expire_sessions: every session that can expire (all but compat keys
//    without PX) ends as if expired (LockLost{kExpired} for its holders; no
//    lock-delay): their holders may have been told anything. The quarantine
//    is set up first, so with one nothing is granted while they end
//    (without one, a waiter may be granted and lose the lock in this same
//    command).
//  - quarantine_ms: no lock is granted until now + quarantine_ms (every lock
//    but a compat key's, also one created meanwhile, is under a lock-delay
//    until then: acquires queue with WAIT and answer kWouldBlock without;
//    compat SET answers kConflict, so a compat key's lock needs no delay,
//    which would outlive the key). With it, every holder from before the restart is past its
//    safe deadline before anyone else can hold its lock.
// Reply: kOk.
struct Reopen {
  Revision revision_floor = 0;
  bool expire_sessions = false;
  std::uint64_t quarantine_ms = 0;
};

// --- leases and transfers (core/leases.cc) ---------------------------------

// Proposed by the primary when a holder's lease (Acquire::lease_ms,
// ExtendLease) ended. Ends the grant of `session` with exactly `token` on
// `lock` if its lease end is at or before the command's `now`: like an
// expiry of that one lock (LockLost{kLeaseEnded}, the holder's lock-delay,
// then Granted for waiters). Reply: kOk; kNotFound (no change) when that
// grant is gone, has no lease, or was extended past `now`.
struct EndLease {
  std::string lock;
  SessionId session = 0;
  Token token = 0;
};

// The holder extends its lease: the new lease end is now + lease_ms (effect
// LeaseDeadline). Reply: kOk; kSessionExpired (session not live); kNotHolder
// (the session does not hold the lock); kStaleToken (another token);
// kConflict (the grant has no lease); kInvalidArgument (lease_ms 0);
// kLimitExceeded (over kMaxSessionTtlMs). Errors change nothing.
struct ExtendLease {
  std::string lock;
  SessionId session = 0;
  Token token = 0;
  std::uint64_t lease_ms = 0;
};

// Moves the grant `from` holds with `token` on `lock` to the live session
// `to`, atomically: `to` becomes a holder with a new token (this command's
// revision), the same mode, lock-delay and lease end; `from` is no longer a
// holder (LockLost{kTransferred}); the waiters keep their places. Effects:
// LockLost{from, kTransferred}, Granted{to, seq 0, new token}, and
// LeaseDeadline for `to` when the grant has a lease.
// Reply: kOk with the new token; kSessionExpired (`from` not live);
// kNotHolder; kStaleToken; kNotFound (`to` not live); kInvalidArgument (`to`
// is `from` or a compat session, or a compat key's lock); kConflict (`to`
// already holds or waits for the lock). Errors change nothing.
struct Transfer {
  std::string lock;
  SessionId from = 0;
  Token token = 0;
  SessionId to = 0;
};

// Proposed by the primary when the connection bound to a session opened with
// ONCLOSE closed (FIN or RST) and the close grace passed without a keepalive
// or re-bind. Ends the session like ExpireSession (LockLost, lock-delay
// applies) with reason kClosed: SessionEnded{kClosed}, LockLost{kClosed}.
// Reply: kOk, or kNotFound if the session is not live.
struct ConnectionClosed {
  SessionId session = 0;
};

// --- shards (DESIGN.md section 7) -------------------------------------------

// Proposed by a shard's primary at start when its configured hash slots (or
// shard id) differ from the applied ones. Records which of the 16384 hash
// slots this shard owns, and the shard's id, which from then on is in the
// high bits of every session id it opens (core/types.h). A state that never
// applied one is unsharded: it owns every slot and its ids carry no shard.
// The server routes by it (a name in a slot not owned gets -MOVED).
// Reply: kOk; kInvalidArgument for a shard id outside 1..kMaxShardId or
// ranges that are not SlotSet::ranges() of a set; kConflict (no change) when
// the log already records another shard id (a shard keeps its id: its
// sessions' ids name it), or when the revision is past the session id space
// (kSessionSerialMask).
struct SetOwnedSlots {
  // The owned slots as SlotSet::ranges() gives them: inclusive, ascending,
  // apart (not adjacent), below kSlotCount. Ranges, not a SlotSet, so that
  // a Command stays small (a SlotSet is a 2 KB bitmap).
  std::vector<slots::SlotRange> slots;
  std::uint32_t shard = 0;
};

using CommandBody = std::variant<OpenSession, CloseSession, ExpireSession, KillSession,
                                 SetSessionTtl, Acquire, Release, CancelWait, TimeoutWait,
                                 Revoke, Tick, FencePut, CompatSet, CompatDelete, Reopen,
                                 EndLease, ExtendLease, Transfer, ConnectionClosed, SetOwnedSlots>;

struct Command {
  LogMillis now = 0;     // the primary's log clock when proposed
  SessionId session = 0; // idempotence key owner (the requesting session), or 0
  std::uint64_t seq = 0; // idempotence sequence, 0 = not idempotent
  CommandBody body;
};

}  // namespace leasehold::core
