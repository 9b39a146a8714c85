// node/timers.h: the primary's timers, on the injected monotonic clock.
//
// Three kinds, each with an ordered index by deadline:
//  - session deadlines: last keepalive (or start) + TTL. When due, the session
//    becomes "expiring" (its ExpireSession is being proposed): no longer
//    keepalive-able and not due again until the proposal failed (retry()).
//  - wait deadlines, keyed by (lock, session): TimeoutWait when due.
//  - wake times (lock-delays ending): one Tick when any is due.
// Pure bookkeeping: no clock reads (callers pass `now`), no proposals.
//
// Thread-safety: none (the node's loop thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/types.h"
#include "leasehold/status.h"
#include "node/clock.h"

namespace leasehold::node {

class Timers {
 public:
  // (Re)starts a session's timer: deadline = now + ttl_ms; ttl_ms 0 never expires.
  void start_session(core::SessionId id, std::uint64_t ttl_ms, TimePoint now);
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

  struct Due {
    std::vector<core::SessionId> sessions;                    // now expiring
    std::vector<std::pair<std::string, core::SessionId>> waits;  // removed
    bool tick = false;                                        // due wakes removed
    bool empty() const { return sessions.empty() && waits.empty() && !tick; }
  };
  // Takes every timer due at `now` (deadline <= now).
  Due take_due(TimePoint now);

  std::optional<TimePoint> next_deadline() const;
  std::size_t session_count() const { return sessions_.size(); }
  std::size_t wait_count() const { return waits_.size(); }

 private:
  struct SessionTimer {
    std::uint64_t ttl_ms = 0;
    TimePoint deadline{};
    bool expiring = false;
  };
  void unindex(core::SessionId id, const SessionTimer& t);
  void index(core::SessionId id, const SessionTimer& t);

  std::unordered_map<core::SessionId, SessionTimer> sessions_;
  std::set<std::pair<TimePoint, core::SessionId>> session_deadlines_;  // armed, not expiring
  std::map<std::pair<std::string, core::SessionId>, TimePoint> waits_;
  std::set<std::tuple<TimePoint, std::string, core::SessionId>> wait_deadlines_;
  std::multiset<TimePoint> wakes_;
};

}  // namespace leasehold::node
