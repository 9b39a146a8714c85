// core/state.h: the internal state of the lock state machine and the
// handlers that change it (one .cc per concept: sessions, locks, compat,
// fence_kv, snapshot). Not part of the public API; only core/*.cc include it.
//
// Handler contract: a handler either returns an error Reply and has changed
// NOTHING, or returns a success Reply after applying its change. So every
// handler validates completely before it mutates.
//
// Ownership: sessions refer to the locks they hold or wait for through
// pointers to the nodes of CoreState::locks (stable in std::unordered_map).
// A lock is erased only when it has no holders and no waiters, so no session
// ever points at an erased lock.
//
// Thread-safety: none (see state_machine.h).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/incremental_map.h"
#include "core/fifo_queue.h"
#include "core/command.h"
#include "core/reply.h"
#include "core/session_labels.h"
#include "core/snapshot_encoder.h"
#include "core/state_machine.h"
#include "core/types.h"

namespace leasehold::core::detail {

// Heterogeneous (string_view) lookup for string-keyed maps.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

struct Holder {
  SessionId session = 0;
  Token token = 0;
  LogMillis acquired_at = 0;
  std::uint64_t delay_ms = 0;  // lock-delay if this holder's session expires/is killed
  std::uint64_t seq = 0;       // the Acquire's idempotence seq (0 = none)
  LockMode mode = LockMode::kExclusive;
  LogMillis lease_until = 0;   // 0 = no lease; else EndLease ends the grant from then on
};

struct Waiter {
  SessionId session = 0;
  std::uint64_t seq = 0;
  LogMillis queued_at = 0;
  LogMillis deadline = 0;  // 0 = none
  std::uint64_t delay_ms = 0;
  LockMode mode = LockMode::kExclusive;
  std::uint64_t lease_ms = 0;  // the grant's lease, counted from the grant (0 = none)
};

// A lock exists while it has holders or waiters or a lock-delay in force.
// Read-write locks mix kExclusive and kShared requests; a semaphore lock takes
// only kSemaphore requests with the same limit.
struct Lock {
  std::vector<Holder> holders;  // in grant order
  FifoQueue<Waiter> waiters;    // FIFO in commit order (O(1) grant from the front)
  Token last_token = 0;         // highest token granted while this lock existed
  LogMillis delay_until = 0;    // 0 = no lock-delay
  std::uint32_t limit = 1;      // semaphore permits (1 for read-write locks)
  bool semaphore = false;
  bool compat = false;          // held by a compat key's implicit session
};

using LockMap = StringMap<Lock>;
using LockEntry = LockMap::value_type;  // std::pair<const std::string, Lock>

struct IdemEntry {
  std::uint64_t seq = 0;
  Reply reply;
};

// The last `Limits::idempotence_window` replies of one session, by seq.
struct IdemWindow {
  std::uint64_t high = 0;           // highest seq recorded
  std::vector<IdemEntry> entries;   // unordered, at most window entries
};

// What only some sessions have: an owner or user name, locks, SEQ retries.
struct SessionExtras {
  SessionLabels labels;              // owner, and the authenticated user that opened it
  std::uint32_t close_grace_plus1 = 0;  // ONCLOSE grace + 1; 0 = opened without ONCLOSE
  std::string reqid;                 // SESSION.OPEN REQID ("" = none); keyed in CoreState::reqids
  std::vector<LockEntry*> locks;     // locks this session holds or waits for
  std::unique_ptr<IdemWindow> idem;  // allocated on the first seq != 0
};

// Kept small (24 bytes): there may be ten million of these (the capacity
// goal: 10M sessions under 1.5 GB). The TTL fits 32 bits
// (kMaxSessionTtlMs); everything a
// plain session (no owner, no user, no lock, no SEQ) does not have is in
// SessionExtras, allocated when first needed and kept until the session
// ends.
struct Session {
  std::uint32_t ttl_ms = 0;  // 0 only for compat sessions: never expires; set through session_ttl()
  bool compat = false;
  LogMillis opened_at = 0;
  std::unique_ptr<SessionExtras> extras;  // null while the session has none of them

  std::string_view owner() const { return extras ? extras->labels.owner() : std::string_view(); }
  std::string_view user() const { return extras ? extras->labels.user() : std::string_view(); }
  // Sets owner and user; allocates the extras only if either is non-empty.
  void set_labels(std::string_view owner, std::string_view user) {
    if (!extras && owner.empty() && user.empty()) return;
    extra().labels = SessionLabels(owner, user);
  }
  // The locks this session holds or waits for (empty span: none).
  std::span<LockEntry* const> locks() const {
    return extras ? std::span<LockEntry* const>(extras->locks) : std::span<LockEntry* const>();
  }
  // The lock list, to change (allocates the extras).
  std::vector<LockEntry*>& lock_list() { return extra().locks; }
  // Moves the lock list out (left empty).
  std::vector<LockEntry*> take_locks() { return extras ? std::move(extras->locks) : std::vector<LockEntry*>(); }
  // ONCLOSE grace, or nullopt when opened without ONCLOSE.
  std::optional<std::uint32_t> close_grace_ms() const {
    if (!extras || extras->close_grace_plus1 == 0) return std::nullopt;
    return extras->close_grace_plus1 - 1;
  }
  std::string_view reqid() const { return extras ? std::string_view(extras->reqid) : std::string_view(); }
  // True if the session has an ONCLOSE grace or a reqid (snapshot version 4).
  bool has_open_options() const { return extras && (extras->close_grace_plus1 != 0 || !extras->reqid.empty()); }
  // Sets the ONCLOSE grace and reqid (allocates the extras only if either is set).
  void set_open_options(std::optional<std::uint32_t> grace, std::string_view reqid) {
    if (!extras && !grace && reqid.empty()) return;
    extra().close_grace_plus1 = grace ? *grace + 1 : 0;
    extra().reqid = std::string(reqid);
  }
  // The idempotence window, or null.
  IdemWindow* idem() const { return extras ? extras->idem.get() : nullptr; }
  // The idempotence window, allocated if need be.
  IdemWindow& idem_window() {
    std::unique_ptr<IdemWindow>& w = extra().idem;
    if (!w) w = std::make_unique<IdemWindow>();
    return *w;
  }

 private:
  SessionExtras& extra() {
    if (!extras) extras = std::make_unique<SessionExtras>();
    return *extras;
  }
};
static_assert(sizeof(Session) <= 24, "a session record grew: ten million of them must fit under 1.5 GB");

// Session ids in ascending order, for paged listing (sessions(after, max)
// is a binary search, not a scan). Ids only grow (each is the revision that
// opened it), so an open appends. An ended session stays as a stale entry
// until the stale ones outnumber the live ones (then one O(n) compaction).
//
// A std::deque, not a vector: it grows a block at a time instead of copying
// (and on a VM page-faulting) every id at each doubling.
struct SessionOrder {
  std::deque<SessionId> ids;
  std::size_t stale = 0;
};

struct CoreState {
  explicit CoreState(Limits l) : limits(l) {}

  Limits limits;
  Revision revision = 0;
  LogMillis last_now = 0;
  // A Reopen quarantine: no grant before this log time (0 = none). Every
  // lock carries it as its lock-delay; new locks get it when created.
  LogMillis paused_until = 0;
  // Grows without rehashing every session at once (common/incremental_map.h).
  IncrementalMap<SessionId, Session> sessions;
  SessionOrder session_order;  // kept by note_session_opened / note_session_ended
  LockMap locks;
  StringMap<FencedValue> fence;
  StringMap<CompatValue> compat;
  // (delay_until, lock name) of every lock with a lock-delay in force.
  std::set<std::pair<LogMillis, std::string>, std::less<>> delayed;
  // Queued waits over all locks: the sum of every Lock::waiters.size(), kept
  // by every push to / erase from a waiter queue (so INFO is O(1)).
  std::size_t waiters = 0;
  // Sessions with a non-empty user (the snapshot's version depends on it;
  // kept where a session gets its user and where one is erased).
  std::size_t sessions_with_user = 0;
  // The shard this state is (SetOwnedSlots; core/shards.cc): its id, in the
  // high bits of every session id opened from then on, and the hash slots it
  // owns. shard 0: unsharded, every slot is owned and ids carry no shard.
  std::uint32_t shard = 0;
  slots::SlotSet owned_slots;
  // Sessions with an ONCLOSE grace or a reqid (snapshot version 4 when non-zero).
  std::size_t sessions_with_open_options = 0;
  // Live sessions opened with a REQID: reqid_key(user, reqid) -> session.
  StringMap<SessionId> reqids;
  // The snapshot being encoded in steps (StateMachine::begin_snapshot), or
  // null. Handlers call before_session_change() before changing a session.
  std::unique_ptr<SnapshotEncoder> encoder;
};

// Before any change of a session's encoded fields (ttl, idempotence window)
// or its erasure: lets a snapshot in progress keep the session as it was.
inline void before_session_change(CoreState& s, SessionId id) {
  if (s.encoder) s.encoder->before_change(s, id);
}

// One apply() in progress.
struct Ctx {
  CoreState& s;
  const Command& cmd;
  LogMillis now;  // max(cmd.now, s.last_now)
  Revision rev;   // s.revision + 1: the revision (token) if this command applies
  std::vector<Effect>& effects;
};

// --- shared helpers (state_machine.cc, locks.cc) ---
// True if `name` is a valid lock/key name (non-empty, within max_name_bytes).
bool name_ok(const Limits& limits, std::string_view name);
// The error reply for an invalid name; `what` is "lock name" or "key".
Reply bad_name(const Limits& limits, std::string_view what, std::string_view name);
// The reply cached for a waiter's Acquire is replaced by the grant/the end.
void update_cached_reply(CoreState& s, SessionId session, std::uint64_t seq, const Reply& reply);
LogMillis saturating_add(LogMillis a, std::uint64_t b);
// Keep CoreState::session_order in step with CoreState::sessions (call after
// inserting / erasing there).
void note_session_opened(CoreState& s, SessionId id);
void note_session_ended(CoreState& s);

// --- locks.cc ---
Reply apply_acquire(Ctx& c, const Acquire& a);
Reply apply_release(Ctx& c, const Release& r);
Reply apply_cancel_wait(Ctx& c, const CancelWait& w);
Reply apply_timeout_wait(Ctx& c, const TimeoutWait& w);
Reply apply_revoke(Ctx& c, const Revoke& r);
// True if `a`, applied now, would queue behind the lock's holders or waiters
// (a lock-delay or a recovery quarantine aside: those are not looked at).
bool acquire_would_queue(const CoreState& s, const Acquire& a);
// Grants queued waiters of `entry` (strict FIFO) unless a lock-delay is in
// force at c.now; then erases the lock if it is idle. Returns false if erased.
bool grant_waiters(Ctx& c, LockEntry& entry);
// Ends lock-delays that are over at c.now and grants their waiters.
void sweep_delays(Ctx& c);
void set_delay(CoreState& s, LockEntry& entry, LogMillis until);
void clear_delay(CoreState& s, LockEntry& entry);
void erase_session_link(Session& session, const LockEntry* entry);
// A holder removed (release, revoke, lease end, transfer): a retry of the
// Acquire that was granted is no longer told it holds the lock.
void withdraw_cached_grant(Ctx& c, const std::string& lock_name, const Holder& h);
// Reason a holder loses its lock when its session ends (see sessions.cc).
enum class EndKind : std::uint8_t { kClose, kExpire, kKill, kReplace, kRevoke, kConnectionClosed };
// Removes `session_id` from every lock it holds or waits for, with effects,
// then erases the session and its compat value (if any).
void end_session(Ctx& c, SessionId session_id, EndKind kind);

// --- leases.cc ---
Reply apply_end_lease(Ctx& c, const EndLease& e);
Reply apply_extend_lease(Ctx& c, const ExtendLease& e);
Reply apply_transfer(Ctx& c, const Transfer& t);
// Refuses a lease over kMaxSessionTtlMs (kLimitExceeded); ok otherwise.
Reply check_lease(std::uint64_t lease_ms);
// Gives the holder just added to `entry` (the last one) the lease `lease_ms`
// from c.now (none when 0), with its LeaseDeadline effect.
void start_lease(Ctx& c, LockEntry& entry, std::uint64_t lease_ms);

// --- sessions.cc ---
// The key of CoreState::reqids: the user's length, ':', the user, the reqid
// (so no two (user, reqid) pairs share a key).
std::string reqid_key(std::string_view user, std::string_view reqid);
// Registers a restored or opened session's open options in the counters and
// the reqid index. False if its reqid key is taken already.
bool note_open_options(CoreState& s, SessionId id, const Session& sess);
Reply apply_open_session(Ctx& c, const OpenSession& o);
Reply apply_connection_closed(Ctx& c, const ConnectionClosed& o);
Reply apply_close_session(Ctx& c, const CloseSession& o);
Reply apply_expire_session(Ctx& c, const ExpireSession& o);
Reply apply_kill_session(Ctx& c, const KillSession& o);
Reply apply_set_ttl(Ctx& c, const SetSessionTtl& o);

// --- fence_kv.cc ---
Reply apply_fence_put(Ctx& c, const FencePut& p);

// --- shards.cc ---
Reply apply_set_owned_slots(Ctx& c, const SetOwnedSlots& o);
// The id of a session opened by this command (c.rev, with the shard's id in
// the high bits when sharded), or an error Reply when the revision is past
// the session id space of a sharded state (checked before any change).
Reply check_session_id_space(const Ctx& c);
SessionId new_session_id(const Ctx& c);
// The highest id a session opened so far can have (ids only grow): the
// revision, with the shard's id in the high bits when sharded.
SessionId highest_session_id(const CoreState& s);

// --- reopen.cc ---
Reply apply_reopen(Ctx& c, const Reopen& r);
// True while a Reopen quarantine is in force at c.now.
bool grants_paused(const Ctx& c);

// --- compat.cc ---
Reply apply_compat_set(Ctx& c, const CompatSet& set);
Reply apply_compat_delete(Ctx& c, const CompatDelete& del);

// A number in an error message (the handlers' replies name ids, tokens
// and limits).
inline std::string num(std::uint64_t v) { return std::to_string(v); }

// --- snapshot_encoder.cc, snapshot.cc ---
std::string encode_snapshot(const CoreState& s);
// Fills an empty `out` (whose limits are set); kCorruption on any bad byte.
Status decode_snapshot(std::string_view bytes, CoreState& out);

}  // namespace leasehold::core::detail

namespace leasehold::core {
struct StateMachine::State : detail::CoreState {
  using detail::CoreState::CoreState;
};
}  // namespace leasehold::core
