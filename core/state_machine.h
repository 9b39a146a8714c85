// core/state_machine.h: the pure, deterministic lock state machine.
//
// apply(command) -> reply + effects. No I/O, no clock, no threads, no
// globals: the same sequence of commands from the same state always yields
// the same replies, effects and state (byte-identical snapshots).
//
// Errors: a command that is malformed, breaks a limit, or is not allowed in
// the current state yields Reply{kError} and changes nothing (the revision
// included). apply() never throws and never crashes on any input value.
//
// Revision: every command applied without error bumps revision() by one; a
// grant's token is the revision of the command that caused it (several
// grants caused by one command, e.g. a release waking shared readers, share
// it; tokens still strictly increase per lock).
//
// Thread-safety: none. One owner (the node's apply thread) uses it; the
// const query methods may be called by that owner between applies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/command.h"
#include "core/reply.h"
#include "core/types.h"
#include "leasehold/status.h"

namespace leasehold::core {

struct SessionInfo {
  SessionId id = 0;
  std::uint64_t ttl_ms = 0;
  std::string owner;
  std::string user;          // authenticated user that opened it ("" = none)
  LogMillis opened_at = 0;
  std::uint32_t held = 0;    // locks held
  std::uint32_t waiting = 0; // queued waits
  bool compat = false;       // implicit session of a compat key
  std::optional<std::uint32_t> close_grace_ms;  // ONCLOSE grace (nullopt: opened without)
};

struct HolderInfo {
  SessionId session = 0;
  std::string owner;
  Token token = 0;
  LogMillis acquired_at = 0;
  LockMode mode = LockMode::kExclusive;  // kShared for readers of a read-write lock
  LogMillis lease_until = 0;             // the grant's lease end (0 = no lease)
};

struct WaiterInfo {
  SessionId session = 0;
  std::string owner;
  std::uint64_t seq = 0;
  LockMode mode = LockMode::kExclusive;
  LogMillis queued_at = 0;
  LogMillis deadline = 0;  // 0 = none
};

struct LockInfo {
  std::string name;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t limit = 1;
  std::vector<HolderInfo> holders;   // in grant order
  std::vector<WaiterInfo> waiters;   // FIFO
  Token last_token = 0;              // highest token ever granted on this lock
  LogMillis delay_until = 0;         // lock-delay in force until (0 = none)
};

struct FencedValue {
  std::string value;
  Token token = 0;  // the token that wrote it
};

struct CompatValue {
  std::string value;
  Token token = 0;
  SessionId session = 0;  // the implicit session (its TTL is the key's)
};

// Aggregates over every lock, for metrics (StateMachine::lock_stats).
struct LockStats {
  std::size_t longest_queue = 0;   // most waiters on one lock
  Token last_token = 0;            // highest last_token of a lock that exists
  LogMillis oldest_hold_ms = 0;    // age of the oldest current holder
  std::size_t long_holds = 0;      // holders held longer than the threshold
};

class StateMachine {
 public:
  explicit StateMachine(Limits limits = {});
  ~StateMachine();
  StateMachine(StateMachine&&) noexcept;
  StateMachine& operator=(StateMachine&&) noexcept;
  StateMachine(const StateMachine&) = delete;
  StateMachine& operator=(const StateMachine&) = delete;

  ApplyResult apply(const Command& command);

  Revision revision() const;
  // The end of a Reopen quarantine (log clock ms; 0 = none was ever set).
  LogMillis paused_until() const;
  LogMillis last_now() const;  // highest Command::now applied
  // The shard this state is (SetOwnedSlots): its id (0 = unsharded), whether
  // it owns `slot` (an unsharded state owns every slot), and the slots it
  // owns (empty when unsharded).
  std::uint32_t shard() const;
  bool owns_slot(slots::Slot slot) const;
  const slots::SlotSet& owned_slots() const;
  const Limits& limits() const;

  // --- queries (no state change) ---
  std::optional<SessionInfo> session(SessionId id) const;
  std::vector<SessionInfo> sessions() const;  // ordered by id (all: O(n log n))
  // One page: the sessions with id > `after`, in id order, at most `max`.
  // O(log sessions + max) (plus stale ids of ended sessions, amortized).
  std::vector<SessionInfo> sessions(SessionId after, std::size_t max) const;
  std::optional<LockInfo> lock(std::string_view name) const;
  // Locks whose name starts with `prefix`, in name order, at most `max`.
  std::vector<LockInfo> locks(std::string_view prefix, std::size_t max) const;
  // One page: like locks(prefix, max), but only names > `after`, and it stops
  // after the lock that brings the holders + waiters listed to `max_entries`
  // or more (always at least one lock when one matches).
  std::vector<LockInfo> locks(std::string_view prefix, std::string_view after, std::size_t max,
                              std::size_t max_entries) const;
  // Queued waits over all locks, O(1) (a counter the handlers keep).
  std::size_t waiter_count() const;
  // True if `acquire`, applied now, would queue (not be granted, not be
  // refused) behind the lock's holders or waiters. O(1) plus the lock's
  // holders. A hint for the node's group commit (node.h, enqueue_defer):
  // lock-delays and a recovery quarantine are not looked at.
  bool acquire_would_queue(const Acquire& acquire) const;
  // LockStats at log time `now`; a hold is long when held more than
  // `long_hold_ms`. One pass over the locks, O(locks + holders), no copies.
  LockStats lock_stats(LogMillis now, LogMillis long_hold_ms) const;
  std::optional<FencedValue> fence_get(std::string_view key) const;
  std::optional<CompatValue> compat_get(std::string_view key) const;
  std::size_t session_count() const;
  std::size_t lock_count() const;

  // Every pending timer the primary must (re)arm after recovery or promotion:
  // SessionStarted for each live session (in id order), then
  // pending_lock_timers().
  std::vector<Effect> pending_timers() const;
  // The same timers in bulk form, for re-arming millions of sessions without
  // an Effect each: (id, ttl_ms) of every live session, in no particular
  // order, O(sessions) ...
  std::vector<std::pair<SessionId, std::uint64_t>> session_ttls() const;
  // ... and WaitDeadline for each queued wait with a deadline (by lock name,
  // then queue order), WakeAt for each lock-delay in force (by time): O(locks
  // + waiters), plus sorting the waits that have a deadline; then
  // LeaseDeadline for each holder with a lease (by lock name, then grant
  // order): O(locks + holders).
  std::vector<Effect> pending_lock_timers() const;

  // --- snapshot ---
  // A versioned, checksummed binary image of the whole state. O(state) in
  // one call.
  std::string snapshot() const;

  // The same image in steps, so that a large state does not stop the owner
  // for long: begin_snapshot() fixes the image at the current state (and
  // encodes the locks and keys: O(locks + keys), with sorting); each
  // snapshot_step(n) encodes at most n more sessions and returns true once
  // all are written; finish_snapshot() hands over the image in pieces, and
  // join_snapshot() (pure, any thread) makes them the bytes snapshot() would
  // have returned at begin_snapshot(). apply() may run between the calls:
  // a session is copied before a command changes it, so the image never
  // sees a command applied after begin_snapshot() (extra memory: the copies
  // of the sessions changed meanwhile). At most one image is in progress
  // (begin_snapshot() while one is, or finish_snapshot() before the last
  // step returned true, is a programming error: asserted). Moving another
  // state over this one, or abandon_snapshot(), drops the image.
  void begin_snapshot();
  bool snapshot_in_progress() const;
  bool snapshot_step(std::size_t max_sessions);
  std::vector<std::string> finish_snapshot();
  void abandon_snapshot();
  static std::string join_snapshot(std::vector<std::string> pieces);
  // To stream the image instead of joining it: take_snapshot_pieces()
  // between steps hands over the pieces finished so far (finish_snapshot()
  // then hands over the rest); the image is every piece in order followed by
  // snapshot_trailer(crc), where crc is snapshot_checksum() folded over the
  // pieces from 0: join_snapshot(p) == p[0] + ... + p[n-1] + that trailer.
  std::vector<std::string> take_snapshot_pieces();
  static std::uint32_t snapshot_checksum(std::string_view piece, std::uint32_t crc);
  static std::string snapshot_trailer(std::uint32_t crc);
  // Rebuilds a state machine; kCorruption on a bad checksum, version or layout.
  static Result<StateMachine> restore(std::string_view bytes, Limits limits = {});

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace leasehold::core
