// core/leases.cc: a grant's lease (its maximum hold: EndLease, ExtendLease)
// and handing a held grant to another session (Transfer).
//
// A lease is counted on the log clock from the command that granted (or
// extended) it; the primary proposes EndLease once the LeaseDeadline effect
// is due, so the end goes through the log like a session expiry. Safety
// does not depend on the log clock: the client counts its own, shorter,
// deadline from before it sent the request (docs/client.md).
#include <algorithm>
#include <string>

#include "common/assert.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

Holder* find_holder(Lock& l, SessionId session) {
  const auto it = std::find_if(l.holders.begin(), l.holders.end(),
                               [session](const Holder& h) { return h.session == session; });
  return it == l.holders.end() ? nullptr : &*it;
}

// The checks LOCK.RELEASE makes of (lock, session, token), shared by
// ExtendLease and Transfer: the session is live and holds the lock with
// exactly `token`. On success `*entry` and `*holder` point at the grant.
Reply check_grant(Ctx& c, const std::string& lock, SessionId session, Token token, LockEntry** entry,
                  Holder** holder) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, lock)) return bad_name(lim, "lock name", lock);
  if (session == 0 || c.s.sessions.find(session) == c.s.sessions.end()) {
    return Reply::fail(ErrorCode::kSessionExpired, "session " + num(session) + " is not live");
  }
  const auto it = c.s.locks.find(lock);
  Holder* h = it == c.s.locks.end() ? nullptr : find_holder(it->second, session);
  if (h == nullptr) {
    return Reply::fail(ErrorCode::kNotHolder, "session " + num(session) + " does not hold lock '" + lock + "'");
  }
  if (h->token != token) {
    return Reply::fail(ErrorCode::kStaleToken, "token " + num(token) + " is not session " + num(session) +
                                                   "'s token " + num(h->token) + " on lock '" + lock + "'");
  }
  *entry = &*it;
  *holder = h;
  return Reply::ok();
}

}  // namespace

Reply check_lease(std::uint64_t lease_ms) {
  if (lease_ms <= kMaxSessionTtlMs) return Reply::ok();
  return Reply::fail(ErrorCode::kLimitExceeded,
                     "lease " + num(lease_ms) + " ms is over the largest, " + num(kMaxSessionTtlMs) + " ms");
}

void start_lease(Ctx& c, LockEntry& entry, std::uint64_t lease_ms) {
  if (lease_ms == 0) return;
  // Only the lock's handlers add holders; they call this right after.
  LEASEHOLD_ASSERT(!entry.second.holders.empty(), "lease for lock '{}' without a holder", entry.first);
  Holder& h = entry.second.holders.back();
  h.lease_until = saturating_add(c.now, lease_ms);
  c.effects.emplace_back(LeaseDeadline{entry.first, h.session, h.token, h.lease_until});
}

Reply apply_end_lease(Ctx& c, const EndLease& e) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, e.lock)) return bad_name(lim, "lock name", e.lock);
  const auto it = c.s.locks.find(e.lock);
  Holder* h = it == c.s.locks.end() ? nullptr : find_holder(it->second, e.session);
  if (h == nullptr || h->token != e.token) {
    return Reply::fail(ErrorCode::kNotFound, "session " + num(e.session) + " holds no grant with token " +
                                                 num(e.token) + " on lock '" + e.lock + "'");
  }
  if (h->lease_until == 0 || h->lease_until > c.now) {
    return Reply::fail(ErrorCode::kNotFound, "the lease of token " + num(e.token) + " on lock '" + e.lock +
                                                 "' has not ended");
  }
  Lock& l = it->second;
  const Holder holder = *h;
  c.effects.emplace_back(LockLost{e.lock, e.session, holder.token, LossReason::kLeaseEnded});
  withdraw_cached_grant(c, e.lock, holder);
  l.holders.erase(l.holders.begin() + (h - l.holders.data()));
  const auto sit = c.s.sessions.find(e.session);
  // A holder's session is live (end_session removes its grants first).
  LEASEHOLD_ASSERT(sit != c.s.sessions.end(), "holder session {} of lock '{}' is not live", e.session, e.lock);
  erase_session_link(sit->second, &*it);
  if (holder.delay_ms > 0) {  // as an expiry: the holder may still be writing
    const LogMillis until = std::max(l.delay_until, saturating_add(c.now, holder.delay_ms));
    set_delay(c.s, *it, until);
    c.effects.emplace_back(WakeAt{until});
  }
  grant_waiters(c, *it);
  return Reply::ok();
}

Reply apply_extend_lease(Ctx& c, const ExtendLease& e) {
  if (e.lease_ms == 0) return Reply::fail(ErrorCode::kInvalidArgument, "a lease extension must be at least 1 ms");
  if (Reply r = check_lease(e.lease_ms); r.is_error()) return r;
  LockEntry* entry = nullptr;
  Holder* h = nullptr;
  if (Reply r = check_grant(c, e.lock, e.session, e.token, &entry, &h); r.is_error()) return r;
  if (h->lease_until == 0) {
    return Reply::fail(ErrorCode::kConflict, "the grant of lock '" + e.lock + "' (token " + num(e.token) +
                                                 ") has no lease to extend (acquire it with LEASE)");
  }
  h->lease_until = saturating_add(c.now, e.lease_ms);
  c.effects.emplace_back(LeaseDeadline{e.lock, e.session, e.token, h->lease_until});
  return Reply::ok();
}

Reply apply_transfer(Ctx& c, const Transfer& t) {
  LockEntry* entry = nullptr;
  Holder* h = nullptr;
  if (Reply r = check_grant(c, t.lock, t.from, t.token, &entry, &h); r.is_error()) return r;
  Lock& l = entry->second;
  if (l.compat) {
    return Reply::fail(ErrorCode::kInvalidArgument, "lock '" + t.lock + "' is a compat key; it cannot be transferred");
  }
  if (t.to == t.from) {
    return Reply::fail(ErrorCode::kInvalidArgument, "session " + num(t.to) + " already holds lock '" + t.lock +
                                                        "': transfer to another session");
  }
  const auto to = t.to == 0 ? c.s.sessions.end() : c.s.sessions.find(t.to);
  if (to == c.s.sessions.end()) {
    return Reply::fail(ErrorCode::kNotFound, "target session " + num(t.to) + " is not live");
  }
  if (to->second.compat) {
    return Reply::fail(ErrorCode::kInvalidArgument, "target session " + num(t.to) + " is a compat key session");
  }
  if (const auto links = to->second.locks(); std::find(links.begin(), links.end(), entry) != links.end()) {
    const bool holds = find_holder(l, t.to) != nullptr;
    return Reply::fail(ErrorCode::kConflict, "target session " + num(t.to) +
                                                 (holds ? " already holds lock '" : " already waits for lock '") +
                                                 t.lock + "'");
  }
  const Holder old = *h;
  LEASEHOLD_ASSERT(c.rev > l.last_token, "transfer token {} is not above the lock's last token {}", c.rev,
                   l.last_token);
  c.effects.emplace_back(LockLost{t.lock, t.from, old.token, LossReason::kTransferred});
  withdraw_cached_grant(c, t.lock, old);
  // The new holder takes the old one's place in grant order: the set of
  // holders (and so every mode and limit check) is what it was.
  *h = Holder{t.to, c.rev, c.now, old.delay_ms, 0, old.mode, old.lease_until};
  l.last_token = c.rev;
  erase_session_link(c.s.sessions.find(t.from)->second, entry);
  to->second.lock_list().push_back(entry);
  c.effects.emplace_back(Granted{t.lock, t.to, 0, c.rev});
  if (old.lease_until != 0) c.effects.emplace_back(LeaseDeadline{t.lock, t.to, c.rev, old.lease_until});
  Reply r;
  r.token = c.rev;
  return r;
}

}  // namespace leasehold::core::detail
