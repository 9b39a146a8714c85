// node/timers.h: the primary's timers, on the injected monotonic clock.
//
// Three kinds, each with an ordered index by deadline:
//  - session deadlines: last keepalive (or start) + TTL. When due, the session
//    becomes "expiring" (its ExpireSession is being proposed): no longer
//    keepalive-able and not due again until the proposal failed (retry()).
//    Indexed by a DeadlineHeap (node/deadline_heap.h): O(log n) per start,
//    keepalive or end, and arm_sessions() builds it for n sessions in O(n).
//  - wait deadlines, keyed by (lock, session): TimeoutWait when due.
//  - wake times (lock-delays ending): one Tick when any is due.
//  - lease ends, keyed by (lock, session), with the grant's token: EndLease
//    when due (a later add for the same key replaces the earlier one).
// Sessions due at the same instant are taken in id order.
// Pure bookkeeping: no clock reads (callers pass `now`), no proposals.
//
// Movable, not copyable (the heap points into the session records).
// Thread-safety: none (the node's loop thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/incremental_map.h"
#include "core/types.h"
#include "leasehold/status.h"
#include "node/clock.h"
#include "node/deadline_heap.h"

namespace leasehold::node {

class Timers {
 public:
  Timers() = default;
  Timers(Timers&&) noexcept = default;
  Timers& operator=(Timers&&) noexcept = default;
  Timers(const Timers&) = delete;
  Timers& operator=(const Timers&) = delete;

  // (Re)starts a session's timer: deadline = now + ttl_ms; ttl_ms 0 never expires.
  void start_session(core::SessionId id, std::uint64_t ttl_ms, TimePoint now);
  // start_session(id, ttl_ms, now) for every (id, ttl_ms) of `sessions`, in
  // bulk: O(n) instead of O(n log n), for a node re-arming recovered sessions.
  // Equivalent to the single calls (an id already armed is restarted).
  void arm_sessions(const std::vector<std::pair<core::SessionId, std::uint64_t>>& sessions, TimePoint now);
  void end_session(core::SessionId id);
  // Keepalive: deadline = now + TTL; returns the TTL (or kNeverExpires).
  // kSessionExpired if unknown, expiring, or its deadline passed.
  Result<std::uint64_t> keepalive(core::SessionId id, TimePoint now);
  Result<std::uint64_t> remaining_ms(core::SessionId id, TimePoint now) const;
  // An expiry proposal failed: the session is due again at `at`.
  void retry_session(core::SessionId id, TimePoint at);

  void add_wait(const std::string& lock, core::SessionId session, TimePoint at);
  void remove_wait(const std::string& lock, core::SessionId session);
  void add_wake(TimePoint at);
  void add_lease(const std::string& lock, core::SessionId session, core::Token token, TimePoint at);
  void remove_lease(const std::string& lock, core::SessionId session);

  struct DueLease {
    std::string lock;
    core::SessionId session = 0;
    core::Token token = 0;
  };

  struct Due {
    std::vector<core::SessionId> sessions;                    // now expiring
    std::vector<std::pair<std::string, core::SessionId>> waits;  // removed
    bool tick = false;                                        // due wakes removed
    std::vector<DueLease> leases;                             // removed
    bool empty() const { return sessions.empty() && waits.empty() && !tick && leases.empty(); }
  };
  // Takes every timer due at `now` (deadline <= now).
  Due take_due(TimePoint now);

  std::optional<TimePoint> next_deadline() const;
  std::size_t session_count() const { return sessions_.size(); }
  std::size_t wait_count() const { return waits_.size(); }
  std::size_t lease_count() const { return leases_.size(); }

 private:
  // A session is armed (in deadlines_, at heap position `pos`) unless its
  // TTL is 0 or it is expiring; only an armed session has a deadline.
  // 8 bytes (ten million sessions must fit the memory goal): the TTL takes
  // 31 bits, as
  // core::kMaxSessionTtlMs allows.
  struct SessionTimer {
    std::uint32_t pos = DeadlineHeap::kAbsent;
    std::uint32_t ttl_ms : 31 = 0;
    std::uint32_t expiring : 1 = 0;
  };
  static_assert(sizeof(SessionTimer) == 8);
  // Arms `t` at `deadline`, or disarms it when it has no TTL or is expiring.
  void set_deadline(core::SessionId id, SessionTimer& t, TimePoint deadline);
  void disarm(SessionTimer& t);

  // Grows without rehashing every session at once (common/incremental_map.h).
  IncrementalMap<core::SessionId, SessionTimer> sessions_;
  DeadlineHeap deadlines_;  // armed sessions
  std::map<std::pair<std::string, core::SessionId>, TimePoint> waits_;
  std::set<std::tuple<TimePoint, std::string, core::SessionId>> wait_deadlines_;
  std::multiset<TimePoint> wakes_;
  std::map<std::pair<std::string, core::SessionId>, std::pair<TimePoint, core::Token>> leases_;
  std::set<std::tuple<TimePoint, std::string, core::SessionId>> lease_deadlines_;
};

}  // namespace leasehold::node
