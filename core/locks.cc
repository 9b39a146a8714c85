// core/locks.cc: acquire, release, waits, revoke and the FIFO grant walk.
#include <algorithm>
#include <string>

#include "common/assert.h"
#include "common/unsafe_test_faults.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

const char* mode_name(LockMode m) {
  switch (m) {
    case LockMode::kExclusive: return "exclusive";
    case LockMode::kShared: return "shared";
    case LockMode::kSemaphore: return "semaphore";
  }
  return "unknown";
}

Reply session_not_live(SessionId id) {
  return Reply::fail(ErrorCode::kSessionExpired, "session " + num(id) + " is not live");
}

// Could one more holder of `mode` join the current holders (queue and
// lock-delay aside)?
bool compatible(const CoreState& s, const Lock& l, LockMode mode) {
  if (l.holders.size() >= s.limits.max_holders_per_lock) return false;
  if (l.semaphore) return l.holders.size() < l.limit;
  if (mode == LockMode::kExclusive) return l.holders.empty();
  return l.holders.empty() || l.holders.front().mode == LockMode::kShared;
}

// Grantable right now to a newcomer: no delay in force, nobody queued ahead
// (strict FIFO), compatible with the holders.
bool grantable_now(const Ctx& c, const Lock& l, LockMode mode) {
  return l.delay_until <= c.now && l.waiters.empty() && compatible(c.s, l, mode);
}

template <typename Vec>
auto find_session(Vec& v, SessionId id) {
  return std::find_if(v.begin(), v.end(), [id](const auto& x) { return x.session == id; });
}

// Invariants (a violation means the grant logic is wrong; granting anyway
// would break mutual exclusion or fencing, so the process stops): an
// exclusive holder is alone, a semaphore has at most `limit` holders, and a
// lock's tokens never go backwards (several grants by one command share it).
void add_holder(Ctx& c, Lock& l, SessionId session, LockMode mode, std::uint64_t delay_ms,
                std::uint64_t seq) {
  LEASEHOLD_ASSERT(l.holders.empty() || (mode != LockMode::kExclusive && l.holders.front().mode != LockMode::kExclusive),
                   "grant of {} to session {} next to {} holder(s), first {}", mode_name(mode), session,
                   l.holders.size(), mode_name(l.holders.front().mode));
  LEASEHOLD_ASSERT(!l.semaphore || l.holders.size() < l.limit, "semaphore grant to session {} beyond limit {}",
                   session, l.limit);
  LEASEHOLD_ASSERT(c.rev >= l.last_token, "token {} for session {} is below the lock's last token {}", c.rev,
                   session, l.last_token);
  l.holders.push_back(Holder{session, c.rev, c.now, delay_ms, seq, mode});
  l.last_token = c.rev;
}

Reply granted_reply(Token token) {
  Reply r;
  r.token = token;
  return r;
}

// Removes `session`'s queued wait on `lock_name` (CancelWait, TimeoutWait).
Reply end_wait(Ctx& c, const std::string& lock_name, SessionId session, WaitEndReason reason) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, lock_name)) return bad_name(lim, "lock name", lock_name);
  const auto sit = c.s.sessions.find(session);
  if (sit == c.s.sessions.end()) {
    if (reason == WaitEndReason::kCancelled) return session_not_live(session);
    return Reply::fail(ErrorCode::kNotFound, "session " + num(session) + " does not exist");
  }
  const auto it = c.s.locks.find(lock_name);
  if (it == c.s.locks.end()) {
    return Reply::fail(ErrorCode::kNotFound,
                       "session " + num(session) + " has no queued wait on lock '" + lock_name + "'");
  }
  Lock& l = it->second;
  const auto w = find_session(l.waiters, session);
  if (w == l.waiters.end()) {
    return Reply::fail(ErrorCode::kNotFound,
                       "session " + num(session) + " has no queued wait on lock '" + lock_name + "'");
  }
  const std::uint64_t seq = w->seq;
  l.waiters.erase(w);
  --c.s.waiters;
  erase_session_link(sit->second, &*it);
  c.effects.emplace_back(WaitEnded{lock_name, session, seq, reason});
  update_cached_reply(c.s, session, seq,
                      reason == WaitEndReason::kTimedOut
                          ? Reply::fail(ErrorCode::kTimedOut, "wait for lock '" + lock_name + "' timed out")
                          : Reply::fail(ErrorCode::kWouldBlock,
                                        "wait for lock '" + lock_name + "' was cancelled"));
  grant_waiters(c, *it);  // the removed waiter may have blocked those behind it
  return Reply::ok();
}

}  // namespace

// A holder removed by a release or a revoke: the acquire that was granted
// must not be told, on a retry of its seq, that it holds the lock. Its
// cached reply becomes the error a cancelled wait leaves. (The server
// releases the grant of a client that left before reading it; that
// client's retry on a new connection used to get the old grant while the
// lock went to the next waiter: two holders.)
void withdraw_cached_grant(Ctx& c, const std::string& lock_name, const Holder& h) {
  if (h.seq == 0) return;  // no cached reply (update_cached_reply's own first test): skip building the message
  update_cached_reply(c.s, h.session, h.seq,
                      Reply::fail(ErrorCode::kWouldBlock, "the grant of lock '" + lock_name + "' (token " +
                                                              num(h.token) + ") to this request has ended"));
}

void erase_session_link(Session& session, const LockEntry* entry) {
  if (!session.extras) return;
  auto& v = session.extras->locks;
  const auto it = std::find(v.begin(), v.end(), entry);
  if (it == v.end()) return;
  *it = v.back();
  v.pop_back();
}

void set_delay(CoreState& s, LockEntry& entry, LogMillis until) {
  Lock& l = entry.second;
  if (l.delay_until == until) return;
  if (l.delay_until != 0) s.delayed.erase({l.delay_until, entry.first});
  l.delay_until = until;
  s.delayed.emplace(until, entry.first);
}

void clear_delay(CoreState& s, LockEntry& entry) {
  Lock& l = entry.second;
  if (l.delay_until == 0) return;
  s.delayed.erase({l.delay_until, entry.first});
  l.delay_until = 0;
}

bool grant_waiters(Ctx& c, LockEntry& entry) {
  Lock& l = entry.second;
  if (l.delay_until != 0) {
    if (l.delay_until > c.now) return true;
    clear_delay(c.s, entry);
  }
  std::size_t granted = 0;
  while (granted < l.waiters.size() && compatible(c.s, l, l.waiters[granted].mode)) {
    const Waiter& w = l.waiters[granted];
    add_holder(c, l, w.session, w.mode, w.delay_ms, w.seq);
    c.effects.emplace_back(Granted{entry.first, w.session, w.seq, c.rev});
    start_lease(c, entry, w.lease_ms);
    update_cached_reply(c.s, w.session, w.seq, granted_reply(c.rev));
    ++granted;
  }
  // UNSAFE TEST FAULT grant-two-waiters (common/unsafe_test_faults.h): an
  // exclusive grant also goes to the next queued exclusive waiter, bypassing
  // add_holder's invariant check on purpose.
  if (granted == 1 && l.waiters.size() > 1 && l.waiters[0].mode == LockMode::kExclusive &&
      l.waiters[1].mode == LockMode::kExclusive && !l.semaphore &&
      unsafe::enabled(unsafe::TestFault::kGrantTwoWaiters)) {
    const Waiter& w = l.waiters[1];
    l.holders.push_back(Holder{w.session, c.rev, c.now, w.delay_ms, w.seq, w.mode});
    c.effects.emplace_back(Granted{entry.first, w.session, w.seq, c.rev});
    update_cached_reply(c.s, w.session, w.seq, granted_reply(c.rev));
    ++granted;
  }
  if (granted > 0) {
    l.waiters.erase(l.waiters.begin(), l.waiters.begin() + static_cast<std::ptrdiff_t>(granted));
    c.s.waiters -= granted;
  }
  if (l.holders.empty() && l.waiters.empty() && l.delay_until == 0) {
    c.s.locks.erase(c.s.locks.find(entry.first));
    return false;
  }
  return true;
}

void sweep_delays(Ctx& c) {
  while (!c.s.delayed.empty() && c.s.delayed.begin()->first <= c.now) {
    const auto first = c.s.delayed.begin();
    const auto it = c.s.locks.find(first->second);
    // A lock with a lock-delay in force exists (it is erased only when idle
    // with no delay). Carrying on would skip that lock's waiters.
    LEASEHOLD_ASSERT(it != c.s.locks.end(), "lock-delay until {} of lock '{}' has no lock", first->first,
                     first->second);
    grant_waiters(c, *it);  // clears the delay, so the loop advances
  }
}

Reply apply_acquire(Ctx& c, const Acquire& a) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, a.lock)) return bad_name(lim, "lock name", a.lock);
  const auto sit = c.s.sessions.find(a.session);
  if (a.session == 0 || sit == c.s.sessions.end()) return session_not_live(a.session);
  Session& sess = sit->second;
  if (sess.compat) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "session " + num(a.session) + " is a compat key session");
  }
  if (a.mode > LockMode::kSemaphore) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "unknown lock mode " + num(static_cast<std::uint8_t>(a.mode)));
  }
  const bool semaphore = a.mode == LockMode::kSemaphore;
  if (!semaphore && a.limit != 1) {
    return Reply::fail(ErrorCode::kInvalidArgument, "limit " + num(a.limit) +
                                                        " requires mode semaphore (mode is " +
                                                        mode_name(a.mode) + ")");
  }
  if (semaphore && a.limit == 0) {
    return Reply::fail(ErrorCode::kInvalidArgument, "semaphore limit must be at least 1");
  }
  if (semaphore && a.limit > lim.max_holders_per_lock) {
    return Reply::fail(ErrorCode::kLimitExceeded, "semaphore limit " + num(a.limit) +
                                                      " is over max_holders_per_lock " +
                                                      num(lim.max_holders_per_lock));
  }
  if (!a.wait && a.wait_ms != 0) {
    return Reply::fail(ErrorCode::kInvalidArgument, "wait_ms " + num(a.wait_ms) + " requires wait");
  }
  if (a.wait_ms > lim.max_wait_ms) {
    return Reply::fail(ErrorCode::kLimitExceeded,
                       "wait_ms " + num(a.wait_ms) + " is over max_wait_ms " + num(lim.max_wait_ms));
  }
  if (a.delay_ms > lim.max_delay_ms) {
    return Reply::fail(ErrorCode::kLimitExceeded, "delay_ms " + num(a.delay_ms) +
                                                      " is over max_delay_ms " + num(lim.max_delay_ms));
  }
  if (Reply r = check_lease(a.lease_ms); r.is_error()) return r;

  auto it = c.s.locks.find(a.lock);
  const bool paused = grants_paused(c);
  if (it == c.s.locks.end()) {
    if (paused && !a.wait) {
      return Reply::fail(ErrorCode::kWouldBlock, "lock '" + a.lock + "' is not available (grants are paused until " +
                                                     num(c.s.paused_until) + " after a recovery)");
    }
    if (c.s.locks.size() >= lim.max_locks) {
      return Reply::fail(ErrorCode::kLimitExceeded, "lock count " + num(c.s.locks.size()) +
                                                        " is at max_locks " + num(lim.max_locks));
    }
    if (lim.max_holders_per_lock == 0) {
      return Reply::fail(ErrorCode::kLimitExceeded, "max_holders_per_lock is 0");
    }
    it = c.s.locks.try_emplace(a.lock).first;
    Lock& l = it->second;
    l.semaphore = semaphore;
    l.limit = a.limit;
    if (!paused) {
      add_holder(c, l, a.session, a.mode, a.delay_ms, c.cmd.seq);
      start_lease(c, *it, a.lease_ms);
      sess.lock_list().push_back(&*it);
      return granted_reply(c.rev);
    }
    set_delay(c.s, *it, c.s.paused_until);  // quarantine: the wait below queues
  }

  Lock& l = it->second;
  if (l.compat) {
    return Reply::fail(ErrorCode::kConflict, "lock '" + a.lock + "' is held as a compat key (SET)");
  }
  if (l.semaphore != semaphore) {
    return Reply::fail(ErrorCode::kConflict,
                       "lock '" + a.lock + "' is a " + (l.semaphore ? "semaphore" : "read-write lock") +
                           ", requested mode " + mode_name(a.mode));
  }
  if (semaphore && l.limit != a.limit) {
    return Reply::fail(ErrorCode::kConflict, "lock '" + a.lock + "' has limit " + num(l.limit) +
                                                 ", requested limit " + num(a.limit));
  }
  // The session's own links are short; the lock's queue may be long.
  if (const auto links = sess.locks(); std::find(links.begin(), links.end(), &*it) != links.end()) {
    const bool holds = find_session(l.holders, a.session) != l.holders.end();
    return Reply::fail(ErrorCode::kConflict, "session " + num(a.session) +
                                                 (holds ? " already holds lock '" : " already waits for lock '") +
                                                 a.lock + "'");
  }
  if (grantable_now(c, l, a.mode)) {
    clear_delay(c.s, *it);  // a delay that is over but not yet swept
    add_holder(c, l, a.session, a.mode, a.delay_ms, c.cmd.seq);
    start_lease(c, *it, a.lease_ms);
    sess.lock_list().push_back(&*it);
    return granted_reply(c.rev);
  }
  if (!a.wait) {
    return Reply::fail(ErrorCode::kWouldBlock, "lock '" + a.lock + "' is not available");
  }
  if (l.waiters.size() >= lim.max_waiters_per_lock) {
    return Reply::fail(ErrorCode::kLimitExceeded, "lock '" + a.lock + "' has " +
                                                      num(l.waiters.size()) +
                                                      " waiters, at max_waiters_per_lock " +
                                                      num(lim.max_waiters_per_lock));
  }
  const LogMillis deadline = a.wait_ms == 0 ? 0 : saturating_add(c.now, a.wait_ms);
  l.waiters.push_back(Waiter{a.session, c.cmd.seq, c.now, deadline, a.delay_ms, a.mode, a.lease_ms});
  ++c.s.waiters;
  sess.lock_list().push_back(&*it);
  if (deadline != 0) c.effects.emplace_back(WaitDeadline{a.lock, a.session, deadline});
  Reply r;
  r.code = ReplyCode::kQueued;
  return r;
}

bool acquire_would_queue(const CoreState& s, const Acquire& a) {
  if (!a.wait) return false;
  const auto it = s.locks.find(a.lock);
  if (it == s.locks.end()) return false;
  const Lock& l = it->second;
  if (l.compat || l.semaphore != (a.mode == LockMode::kSemaphore)) return false;  // refused, not queued
  return !l.waiters.empty() || !compatible(s, l, a.mode);
}

Reply apply_release(Ctx& c, const Release& r) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, r.lock)) return bad_name(lim, "lock name", r.lock);
  const auto sit = c.s.sessions.find(r.session);
  if (r.session == 0 || sit == c.s.sessions.end()) return session_not_live(r.session);
  const auto it = c.s.locks.find(r.lock);
  const auto not_holder = [&] {
    return Reply::fail(ErrorCode::kNotHolder,
                       "session " + num(r.session) + " does not hold lock '" + r.lock + "'");
  };
  if (it == c.s.locks.end()) return not_holder();
  Lock& l = it->second;
  const auto h = find_session(l.holders, r.session);
  if (h == l.holders.end()) return not_holder();
  if (h->token != r.token) {
    return Reply::fail(ErrorCode::kStaleToken, "token " + num(r.token) + " is not session " +
                                                   num(r.session) + "'s token " + num(h->token) +
                                                   " on lock '" + r.lock + "'");
  }
  if (l.compat) {
    return Reply::fail(ErrorCode::kConflict, "lock '" + r.lock + "' is a compat key; use DEL");
  }
  if (r.by_other) {
    c.effects.emplace_back(LockLost{r.lock, r.session, r.token, LossReason::kReleasedByOther});
  }
  withdraw_cached_grant(c, r.lock, *h);
  l.holders.erase(h);
  erase_session_link(sit->second, &*it);
  grant_waiters(c, *it);
  return Reply::ok();
}

Reply apply_cancel_wait(Ctx& c, const CancelWait& w) {
  return end_wait(c, w.lock, w.session, WaitEndReason::kCancelled);
}

Reply apply_timeout_wait(Ctx& c, const TimeoutWait& w) {
  return end_wait(c, w.lock, w.session, WaitEndReason::kTimedOut);
}

Reply apply_revoke(Ctx& c, const Revoke& r) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, r.lock)) return bad_name(lim, "lock name", r.lock);
  const auto it = c.s.locks.find(r.lock);
  if (it == c.s.locks.end() || it->second.holders.empty()) {
    return Reply::fail(ErrorCode::kNotFound, "lock '" + r.lock + "' has no holders");
  }
  Lock& l = it->second;
  if (l.compat) {  // the key's implicit session has nothing else: end it
    end_session(c, l.holders.front().session, EndKind::kRevoke);
    return Reply::ok();
  }
  const std::vector<Holder> holders = std::move(l.holders);
  l.holders.clear();
  for (const Holder& h : holders) {
    c.effects.emplace_back(LockLost{r.lock, h.session, h.token, LossReason::kRevoked});
    withdraw_cached_grant(c, r.lock, h);
    const auto sit = c.s.sessions.find(h.session);
    if (sit != c.s.sessions.end()) erase_session_link(sit->second, &*it);
  }
  grant_waiters(c, *it);
  return Reply::ok();
}

}  // namespace leasehold::core::detail
