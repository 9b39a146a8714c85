// core/queries.cc: read-only views of the state (no state change).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/state.h"

namespace leasehold::core {
namespace {

using detail::CoreState;
using detail::LockEntry;
using detail::Session;

SessionInfo session_info(SessionId id, const Session& s) {
  SessionInfo info;
  info.id = id;
  info.ttl_ms = s.ttl_ms;
  info.owner = s.owner();
  info.user = s.user();
  info.opened_at = s.opened_at;
  info.compat = s.compat;
  info.close_grace_ms = s.close_grace_ms();
  for (const LockEntry* e : s.locks()) {
    const auto& holders = e->second.holders;
    const bool holds = std::any_of(holders.begin(), holders.end(),
                                   [id](const detail::Holder& h) { return h.session == id; });
    (holds ? info.held : info.waiting) += 1;
  }
  return info;
}

std::string owner_of(const CoreState& s, SessionId id) {
  const auto it = s.sessions.find(id);
  return it == s.sessions.end() ? std::string() : std::string(it->second.owner());
}

LockInfo lock_info(const CoreState& s, const LockEntry& e) {
  const detail::Lock& l = e.second;
  LockInfo info;
  info.name = e.first;
  info.limit = l.limit;
  info.last_token = l.last_token;
  info.delay_until = l.delay_until;
  if (l.semaphore) {
    info.mode = LockMode::kSemaphore;
  } else if (!l.holders.empty()) {
    info.mode = l.holders.front().mode;
  } else if (!l.waiters.empty()) {
    info.mode = l.waiters.front().mode;
  }
  for (const detail::Holder& h : l.holders) {
    info.holders.push_back(
        HolderInfo{h.session, owner_of(s, h.session), h.token, h.acquired_at, h.mode, h.lease_until});
  }
  for (const detail::Waiter& w : l.waiters) {
    info.waiters.push_back(
        WaiterInfo{w.session, owner_of(s, w.session), w.seq, w.mode, w.queued_at, w.deadline});
  }
  return info;
}

}  // namespace

std::optional<SessionInfo> StateMachine::session(SessionId id) const {
  const auto it = s_->sessions.find(id);
  if (it == s_->sessions.end()) return std::nullopt;
  return session_info(id, it->second);
}

std::vector<SessionInfo> StateMachine::sessions() const {
  std::vector<SessionInfo> out;
  out.reserve(s_->sessions.size());
  for (const auto& [id, sess] : s_->sessions) out.push_back(session_info(id, sess));
  std::sort(out.begin(), out.end(), [](const SessionInfo& a, const SessionInfo& b) { return a.id < b.id; });
  return out;
}

std::optional<LockInfo> StateMachine::lock(std::string_view name) const {
  const auto it = s_->locks.find(name);
  if (it == s_->locks.end()) return std::nullopt;
  return lock_info(*s_, *it);
}

std::vector<SessionInfo> StateMachine::sessions(SessionId after, std::size_t max) const {
  const auto& ids = s_->session_order.ids;  // ascending, with stale ids of ended sessions
  std::vector<SessionInfo> out;
  for (auto it = std::upper_bound(ids.begin(), ids.end(), after); it != ids.end() && out.size() < max; ++it) {
    const auto found = s_->sessions.find(*it);
    if (found != s_->sessions.end()) out.push_back(session_info(*it, found->second));
  }
  return out;
}

std::vector<LockInfo> StateMachine::locks(std::string_view prefix, std::size_t max) const {
  return locks(prefix, {}, max, SIZE_MAX);
}

std::vector<LockInfo> StateMachine::locks(std::string_view prefix, std::string_view after, std::size_t max,
                                          std::size_t max_entries) const {
  // A max-heap (by name) of the `max` first matching names above `after`.
  std::vector<const LockEntry*> page;
  const auto by_name = [](const LockEntry* a, const LockEntry* b) { return a->first < b->first; };
  for (const LockEntry& e : s_->locks) {
    const std::string_view name(e.first);
    if (max == 0 || !name.starts_with(prefix) || (!after.empty() && name <= after)) continue;
    if (page.size() < max) {
      page.push_back(&e);
      std::push_heap(page.begin(), page.end(), by_name);
    } else if (name < page.front()->first) {
      std::pop_heap(page.begin(), page.end(), by_name);
      page.back() = &e;
      std::push_heap(page.begin(), page.end(), by_name);
    }
  }
  std::sort_heap(page.begin(), page.end(), by_name);
  std::vector<LockInfo> out;
  out.reserve(page.size());
  std::size_t entries = 0;
  for (const LockEntry* e : page) {
    if (entries >= max_entries) break;
    entries += e->second.holders.size() + e->second.waiters.size();
    out.push_back(lock_info(*s_, *e));
  }
  return out;
}

std::size_t StateMachine::waiter_count() const { return s_->waiters; }

LockStats StateMachine::lock_stats(LogMillis now, LogMillis long_hold_ms) const {
  LockStats out;
  for (const LockEntry& e : s_->locks) {
    const detail::Lock& l = e.second;
    out.longest_queue = std::max(out.longest_queue, l.waiters.size());
    out.last_token = std::max(out.last_token, l.last_token);
    for (const detail::Holder& h : l.holders) {
      const LogMillis age = now > h.acquired_at ? now - h.acquired_at : 0;
      out.oldest_hold_ms = std::max(out.oldest_hold_ms, age);
      if (age > long_hold_ms) ++out.long_holds;
    }
  }
  return out;
}

bool StateMachine::acquire_would_queue(const Acquire& acquire) const {
  return detail::acquire_would_queue(*s_, acquire);
}

std::optional<FencedValue> StateMachine::fence_get(std::string_view key) const {
  const auto it = s_->fence.find(key);
  if (it == s_->fence.end()) return std::nullopt;
  return it->second;
}

std::optional<CompatValue> StateMachine::compat_get(std::string_view key) const {
  const auto it = s_->compat.find(key);
  if (it == s_->compat.end()) return std::nullopt;
  return it->second;
}

std::size_t StateMachine::session_count() const { return s_->sessions.size(); }
std::size_t StateMachine::lock_count() const { return s_->locks.size(); }

std::vector<std::pair<SessionId, std::uint64_t>> StateMachine::session_ttls() const {
  std::vector<std::pair<SessionId, std::uint64_t>> out;
  out.reserve(s_->sessions.size());
  for (const auto& [id, sess] : s_->sessions) out.emplace_back(id, sess.ttl_ms);
  return out;
}

std::vector<Effect> StateMachine::pending_lock_timers() const {
  std::vector<const LockEntry*> waiting;  // locks with a deadline among their waiters
  for (const LockEntry& e : s_->locks) {
    const auto& ws = e.second.waiters;
    if (std::any_of(ws.begin(), ws.end(), [](const detail::Waiter& w) { return w.deadline != 0; })) {
      waiting.push_back(&e);
    }
  }
  std::sort(waiting.begin(), waiting.end(), [](const LockEntry* a, const LockEntry* b) { return a->first < b->first; });
  std::vector<Effect> out;
  for (const LockEntry* e : waiting) {
    for (const detail::Waiter& w : e->second.waiters) {
      if (w.deadline != 0) out.emplace_back(WaitDeadline{e->first, w.session, w.deadline});
    }
  }
  for (const auto& [at, name] : s_->delayed) out.emplace_back(WakeAt{at});
  std::vector<const LockEntry*> leased;  // locks with a lease among their holders
  for (const LockEntry& e : s_->locks) {
    const auto& hs = e.second.holders;
    if (std::any_of(hs.begin(), hs.end(), [](const detail::Holder& h) { return h.lease_until != 0; })) {
      leased.push_back(&e);
    }
  }
  std::sort(leased.begin(), leased.end(), [](const LockEntry* a, const LockEntry* b) { return a->first < b->first; });
  for (const LockEntry* e : leased) {
    for (const detail::Holder& h : e->second.holders) {
      if (h.lease_until != 0) out.emplace_back(LeaseDeadline{e->first, h.session, h.token, h.lease_until});
    }
  }
  return out;
}

std::vector<Effect> StateMachine::pending_timers() const {
  auto sessions = session_ttls();
  std::sort(sessions.begin(), sessions.end());
  std::vector<Effect> out;
  out.reserve(sessions.size());
  for (const auto& [id, ttl_ms] : sessions) out.emplace_back(SessionStarted{id, ttl_ms});
  for (Effect& e : pending_lock_timers()) out.push_back(std::move(e));
  return out;
}

}  // namespace leasehold::core
