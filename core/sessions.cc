// core/sessions.cc: session lifecycle (open, close, expire, kill, TTL) and
// end_session, which releases a session's locks and drops its waits.
//
// Effects when a session ends (in order, per lock in name order, then the end):
//   close    : no LockLost (the owner asked for it), WaitEnded{kSessionEnded},
//              Granted for waiters that now hold, SessionEnded{kClosed}.
//   expire   : LockLost{kExpired} + lock-delay (WakeAt) per holder with a delay,
//              WaitEnded, Granted, SessionEnded{kExpired}.
//   kill     : as expire with kKilled.
//   replace  : (compat SET over a compat key) LockLost{kReplaced}, SessionEnded{kClosed}.
//   revoke   : (LOCK.REVOKE of a compat key) LockLost{kRevoked}, SessionEnded{kKilled}.
//   connection closed (ONCLOSE): as expire with LockLost{kClosed}, SessionEnded{kClosed}.
#include <algorithm>
#include <string>

#include "common/assert.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

// "ttl_ms 0 is out of range: a session TTL must be between 100 and 3600000 ms
// (--min-ttl-ms, --max-ttl-ms)": too low is kInvalidArgument, too high
// kLimitExceeded.
Reply check_ttl(const Limits& lim, std::uint64_t ttl_ms) {
  const auto [min, max] = accepted_ttls(lim);
  if (ttl_ms >= min && ttl_ms <= max) return Reply::ok();
  const std::string why = "ttl_ms " + num(ttl_ms) + " is out of range: a session TTL must be between " + num(min) +
                          " and " + num(max) + " ms (--min-ttl-ms, --max-ttl-ms)";
  return Reply::fail(ttl_ms < min ? ErrorCode::kInvalidArgument : ErrorCode::kLimitExceeded, why);
}

LossReason loss_reason(EndKind kind) {
  switch (kind) {
    case EndKind::kExpire: return LossReason::kExpired;
    case EndKind::kKill: return LossReason::kKilled;
    case EndKind::kReplace: return LossReason::kReplaced;
    case EndKind::kRevoke: return LossReason::kRevoked;
    case EndKind::kClose:
    case EndKind::kConnectionClosed: break;
  }
  return LossReason::kClosed;
}

SessionEndReason end_reason(EndKind kind) {
  switch (kind) {
    case EndKind::kExpire: return SessionEndReason::kExpired;
    case EndKind::kKill:
    case EndKind::kRevoke: return SessionEndReason::kKilled;
    case EndKind::kClose:
    case EndKind::kReplace:
    case EndKind::kConnectionClosed: break;
  }
  return SessionEndReason::kClosed;
}

Reply end_by_operator(Ctx& c, SessionId id, EndKind kind) {
  if (c.s.sessions.find(id) == c.s.sessions.end()) {
    return Reply::fail(ErrorCode::kNotFound, "session " + num(id) + " does not exist");
  }
  end_session(c, id, kind);
  return Reply::ok();
}

}  // namespace

void end_session(Ctx& c, SessionId id, EndKind kind) {
  const auto sit = c.s.sessions.find(id);
  if (sit == c.s.sessions.end()) return;
  before_session_change(c.s, id);
  Session& sess = sit->second;
  const bool had_user = !sess.user().empty();
  if (sess.has_open_options()) {
    --c.s.sessions_with_open_options;
    if (!sess.reqid().empty()) c.s.reqids.erase(reqid_key(sess.user(), sess.reqid()));
  }
  std::vector<LockEntry*> links = sess.take_locks();
  // Canonical order (independent of how the links were built or restored).
  std::sort(links.begin(), links.end(),
            [](const LockEntry* a, const LockEntry* b) { return a->first < b->first; });
  if (sess.compat) {
    for (const LockEntry* e : links) c.s.compat.erase(e->first);
  }
  const bool applies_delay = kind == EndKind::kExpire || kind == EndKind::kKill || kind == EndKind::kConnectionClosed;
  for (LockEntry* e : links) {
    Lock& l = e->second;
    const auto h = std::find_if(l.holders.begin(), l.holders.end(),
                                [id](const Holder& x) { return x.session == id; });
    if (h != l.holders.end()) {
      const Holder holder = *h;
      l.holders.erase(h);
      if (kind != EndKind::kClose) {
        c.effects.emplace_back(LockLost{e->first, id, holder.token, loss_reason(kind)});
      }
      if (applies_delay && holder.delay_ms > 0) {
        const LogMillis until = std::max(l.delay_until, saturating_add(c.now, holder.delay_ms));
        set_delay(c.s, *e, until);
        c.effects.emplace_back(WakeAt{until});
      }
    } else {
      const auto w = std::find_if(l.waiters.begin(), l.waiters.end(),
                                  [id](const Waiter& x) { return x.session == id; });
      if (w != l.waiters.end()) {
        const std::uint64_t seq = w->seq;
        l.waiters.erase(w);
        --c.s.waiters;
        c.effects.emplace_back(WaitEnded{e->first, id, seq, WaitEndReason::kSessionEnded});
      }
    }
    grant_waiters(c, *e);
  }
  c.effects.emplace_back(SessionEnded{id, end_reason(kind)});
  c.s.sessions.erase(id);
  if (had_user) --c.s.sessions_with_user;
  note_session_ended(c.s);
}

void note_session_opened(CoreState& s, SessionId id) {
  auto& ids = s.session_order.ids;
  LEASEHOLD_ASSERT(ids.empty() || ids.back() < id, "session id {} opened after id {}", id, ids.back());
  ids.push_back(id);
}

void note_session_ended(CoreState& s) {
  SessionOrder& order = s.session_order;
  if (++order.stale <= s.sessions.size() + 1024) return;
  std::erase_if(order.ids, [&s](SessionId id) { return s.sessions.count(id) == 0; });
  order.stale = 0;
}

std::string reqid_key(std::string_view user, std::string_view reqid) {
  std::string key = num(user.size());
  key += ':';
  key += user;
  key += reqid;
  return key;
}

bool note_open_options(CoreState& s, SessionId id, const Session& sess) {
  if (!sess.has_open_options()) return true;
  ++s.sessions_with_open_options;
  if (sess.reqid().empty()) return true;
  return s.reqids.try_emplace(reqid_key(sess.user(), sess.reqid()), id).second;
}

Reply apply_open_session(Ctx& c, const OpenSession& o) {
  const Limits& lim = c.s.limits;
  if (!o.reqid.empty()) {
    if (o.reqid.size() > lim.max_reqid_bytes) {
      return Reply::fail(ErrorCode::kLimitExceeded, "reqid is " + num(o.reqid.size()) + " bytes, over max_reqid_bytes " +
                                                        num(lim.max_reqid_bytes));
    }
    if (!std::all_of(o.reqid.begin(), o.reqid.end(), [](char ch) { return ch > ' ' && ch < 0x7f; })) {
      return Reply::fail(ErrorCode::kInvalidArgument, "reqid must be printable ASCII without spaces");
    }
    // A retry of an open whose session is still live: that session, unchanged.
    if (const auto found = c.s.reqids.find(reqid_key(o.user, o.reqid)); found != c.s.reqids.end()) {
      Reply r;
      r.session = found->second;
      return r;
    }
  }
  if (Reply r = check_ttl(lim, o.ttl_ms); r.is_error()) return r;
  if (o.close_grace_ms && *o.close_grace_ms > o.ttl_ms) {
    return Reply::fail(ErrorCode::kInvalidArgument, "close grace " + num(*o.close_grace_ms) +
                                                        " ms is over the session TTL " + num(o.ttl_ms) +
                                                        " ms (the TTL would end the session first)");
  }
  if (o.owner.size() > lim.max_owner_bytes) {
    return Reply::fail(ErrorCode::kLimitExceeded, "owner is " + num(o.owner.size()) +
                                                      " bytes, over max_owner_bytes " +
                                                      num(lim.max_owner_bytes));
  }
  if (o.user.size() > lim.max_owner_bytes) {
    return Reply::fail(ErrorCode::kLimitExceeded, "user is " + num(o.user.size()) +
                                                      " bytes, over max_owner_bytes " +
                                                      num(lim.max_owner_bytes));
  }
  if (c.s.sessions.size() >= lim.max_sessions) {
    return Reply::fail(ErrorCode::kLimitExceeded, "session count " + num(c.s.sessions.size()) +
                                                      " is at max_sessions " + num(lim.max_sessions));
  }
  if (Reply r = check_session_id_space(c); r.is_error()) return r;
  const SessionId id = new_session_id(c);
  Session& sess = c.s.sessions[id];
  note_session_opened(c.s, id);
  sess.ttl_ms = session_ttl(o.ttl_ms);
  sess.opened_at = c.now;
  sess.set_labels(o.owner, o.user);
  if (!o.user.empty()) ++c.s.sessions_with_user;
  sess.set_open_options(o.close_grace_ms, o.reqid);
  const bool fresh_key = note_open_options(c.s, id, sess);
  LEASEHOLD_ASSERT(fresh_key, "reqid of session {} already taken", id);
  c.effects.emplace_back(SessionStarted{id, o.ttl_ms});
  Reply r;
  r.session = id;
  return r;
}

Reply apply_close_session(Ctx& c, const CloseSession& o) {
  if (c.s.sessions.find(o.session) == c.s.sessions.end()) {
    return Reply::fail(ErrorCode::kSessionExpired, "session " + num(o.session) + " is not live");
  }
  end_session(c, o.session, EndKind::kClose);
  return Reply::ok();
}

Reply apply_expire_session(Ctx& c, const ExpireSession& o) {
  return end_by_operator(c, o.session, EndKind::kExpire);
}

Reply apply_kill_session(Ctx& c, const KillSession& o) {
  return end_by_operator(c, o.session, EndKind::kKill);
}

Reply apply_connection_closed(Ctx& c, const ConnectionClosed& o) {
  return end_by_operator(c, o.session, EndKind::kConnectionClosed);
}

Reply apply_set_ttl(Ctx& c, const SetSessionTtl& o) {
  const auto sit = c.s.sessions.find(o.session);
  if (sit == c.s.sessions.end()) {
    return Reply::fail(ErrorCode::kSessionExpired, "session " + num(o.session) + " is not live");
  }
  // A compat key may have no expiry (ttl 0), like a Redis key without PX.
  if (!(sit->second.compat && o.ttl_ms == 0)) {
    if (Reply r = check_ttl(c.s.limits, o.ttl_ms); r.is_error()) return r;
  }
  before_session_change(c.s, o.session);
  sit->second.ttl_ms = session_ttl(o.ttl_ms);
  c.effects.emplace_back(SessionTtlChanged{o.session, o.ttl_ms});
  return Reply::ok();
}

}  // namespace leasehold::core::detail
