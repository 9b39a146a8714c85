#include "node/timers.h"

#include <algorithm>

#include "common/assert.h"
#include "common/unsafe_test_faults.h"
#include "node/node.h"

namespace leasehold::node {

namespace {
std::uint64_t ms_between(TimePoint from, TimePoint to) {
  if (to <= from) return 0;
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count());
}
// How long after `now` a session with `ttl_ms` expires: its TTL.
std::chrono::milliseconds expiry_after(std::uint64_t ttl_ms) {
  // UNSAFE TEST FAULT expire-early (common/unsafe_test_faults.h): half the TTL.
  if (unsafe::enabled(unsafe::TestFault::kExpireEarly)) return std::chrono::milliseconds(ttl_ms / 2);
  return std::chrono::milliseconds(ttl_ms);
}
Status not_live(core::SessionId id) {
  return Status(ErrorCode::kSessionExpired, "session " + std::to_string(id) + " is not live");
}
}  // namespace

void Timers::disarm(SessionTimer& t) {
  if (t.pos != DeadlineHeap::kAbsent) deadlines_.erase(t.pos);
}

void Timers::set_deadline(core::SessionId id, SessionTimer& t, TimePoint deadline) {
  if (t.ttl_ms == 0 || t.expiring) return disarm(t);
  if (t.pos != DeadlineHeap::kAbsent) return deadlines_.update(t.pos, deadline);
  deadlines_.push(deadline, id, &t.pos);
}

void Timers::start_session(core::SessionId id, std::uint64_t ttl_ms, TimePoint now) {
  SessionTimer& t = sessions_[id];
  t.ttl_ms = core::session_ttl(ttl_ms);
  t.expiring = 0;
  set_deadline(id, t, now + expiry_after(ttl_ms));
}

void Timers::arm_sessions(const std::vector<std::pair<core::SessionId, std::uint64_t>>& sessions, TimePoint now) {
  sessions_.reserve(sessions_.size() + sessions.size());
  // Sessions already armed keep their heap entries (moved in place by
  // start_session); new ones are appended and ordered by one build().
  for (const auto& [id, ttl_ms] : sessions) {
    auto [it, inserted] = sessions_.try_emplace(id);
    SessionTimer& t = it->second;
    if (!inserted) {
      disarm(t);
      t.expiring = 0;
    }
    t.ttl_ms = core::session_ttl(ttl_ms);
    if (ttl_ms != 0) deadlines_.append(now + expiry_after(ttl_ms), id, &t.pos);
  }
  deadlines_.build();
}

void Timers::end_session(core::SessionId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  disarm(it->second);
  sessions_.erase(it);
}

Result<std::uint64_t> Timers::keepalive(core::SessionId id, TimePoint now) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.expiring) return not_live(id);
  SessionTimer& t = it->second;
  if (t.ttl_ms == 0) return kNeverExpires;
  if (now >= deadlines_.at(t.pos)) return not_live(id);  // due; run_due_timers proposes its expiry
  deadlines_.update(t.pos, now + expiry_after(t.ttl_ms));
  return t.ttl_ms;
}

Result<std::uint64_t> Timers::remaining_ms(core::SessionId id, TimePoint now) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.expiring) return not_live(id);
  if (it->second.ttl_ms == 0) return kNeverExpires;
  return ms_between(now, deadlines_.at(it->second.pos));
}

void Timers::retry_session(core::SessionId id, TimePoint at) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  it->second.expiring = 0;
  set_deadline(id, it->second, at);
}

void Timers::add_wait(const std::string& lock, core::SessionId session, TimePoint at) {
  remove_wait(lock, session);
  waits_.emplace(std::make_pair(lock, session), at);
  wait_deadlines_.emplace(at, lock, session);
}

void Timers::remove_wait(const std::string& lock, core::SessionId session) {
  auto it = waits_.find({lock, session});
  if (it == waits_.end()) return;
  wait_deadlines_.erase({it->second, lock, session});
  waits_.erase(it);
}

void Timers::add_wake(TimePoint at) { wakes_.insert(at); }

void Timers::add_lease(const std::string& lock, core::SessionId session, core::Token token, TimePoint at) {
  remove_lease(lock, session);
  leases_.emplace(std::make_pair(lock, session), std::make_pair(at, token));
  lease_deadlines_.emplace(at, lock, session);
}

void Timers::remove_lease(const std::string& lock, core::SessionId session) {
  auto it = leases_.find({lock, session});
  if (it == leases_.end()) return;
  lease_deadlines_.erase({it->second.first, lock, session});
  leases_.erase(it);
}

Timers::Due Timers::take_due(TimePoint now) {
  Due due;
  while (!deadlines_.empty() && deadlines_.top().at <= now) {
    const DeadlineHeap::Entry e = deadlines_.pop();
    sessions_[e.id].expiring = 1;
    due.sessions.push_back(e.id);
  }
  while (!wait_deadlines_.empty() && std::get<0>(*wait_deadlines_.begin()) <= now) {
    auto [at, lock, session] = *wait_deadlines_.begin();
    wait_deadlines_.erase(wait_deadlines_.begin());
    waits_.erase({lock, session});
    due.waits.emplace_back(std::move(lock), session);
  }
  while (!wakes_.empty() && *wakes_.begin() <= now) {
    wakes_.erase(wakes_.begin());
    due.tick = true;
  }
  while (!lease_deadlines_.empty() && std::get<0>(*lease_deadlines_.begin()) <= now) {
    auto [at, lock, session] = *lease_deadlines_.begin();
    lease_deadlines_.erase(lease_deadlines_.begin());
    const auto it = leases_.find({lock, session});
    const core::Token token = it->second.second;
    leases_.erase(it);
    due.leases.push_back(DueLease{std::move(lock), session, token});
  }
  return due;
}

std::optional<TimePoint> Timers::next_deadline() const {
  std::optional<TimePoint> next;
  const auto consider = [&next](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  if (!deadlines_.empty()) consider(deadlines_.top().at);
  if (!wait_deadlines_.empty()) consider(std::get<0>(*wait_deadlines_.begin()));
  if (!wakes_.empty()) consider(*wakes_.begin());
  if (!lease_deadlines_.empty()) consider(std::get<0>(*lease_deadlines_.begin()));
  return next;
}

}  // namespace leasehold::node
