// core/compat.cc: Redis-style efficiency locks (SET NX PX / DEL / DELIFEQ).
// A compat key is an exclusive lock named `key` held by an implicit session
// (owner "compat", flagged compat, TTL = PX, 0 = never expires) that holds
// nothing else; the value lives in CoreState::compat. Ending that session
// (expire, kill, DEL, overwrite) frees the key.
#include <optional>
#include <string>

#include "common/assert.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

Reply check_value(const Limits& lim, std::string_view value) {
  if (value.size() > lim.max_value_bytes) {
    return Reply::fail(ErrorCode::kLimitExceeded, "value is " + num(value.size()) +
                                                      " bytes, over max_value_bytes " +
                                                      num(lim.max_value_bytes));
  }
  return Reply::ok();
}

}  // namespace

Reply apply_compat_set(Ctx& c, const CompatSet& set) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, set.key)) return bad_name(lim, "key", set.key);
  if (Reply r = check_value(lim, set.value); r.is_error()) return r;
  if (set.ttl_ms != 0 && set.ttl_ms < lim.min_ttl_ms) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "ttl_ms " + num(set.ttl_ms) + " is under min_ttl_ms " + num(lim.min_ttl_ms));
  }
  if (set.ttl_ms > std::min(lim.max_ttl_ms, kMaxSessionTtlMs)) {
    return Reply::fail(ErrorCode::kLimitExceeded, "ttl_ms " + num(set.ttl_ms) + " is over max_ttl_ms " +
                                                      num(std::min(lim.max_ttl_ms, kMaxSessionTtlMs)));
  }
  if (set.condition > CompatCondition::kIfPresent) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "unknown SET condition " + num(static_cast<std::uint8_t>(set.condition)));
  }
  if (grants_paused(c)) {
    return Reply::fail(ErrorCode::kConflict, "key '" + set.key + "' cannot be set: grants are paused until " +
                                                 num(c.s.paused_until) + " after a recovery");
  }
  const CompatValue* old = nullptr;
  if (const auto lit = c.s.locks.find(set.key); lit != c.s.locks.end()) {
    if (!lit->second.compat) {
      const bool busy = !lit->second.holders.empty() || !lit->second.waiters.empty();
      return Reply::fail(ErrorCode::kConflict,
                         "key '" + set.key + "' " +
                             (busy ? "is held through LOCK.ACQUIRE" : "is under a lock-delay"));
    }
    old = &c.s.compat.find(set.key)->second;
  }
  if (set.condition == CompatCondition::kIfAbsent && old != nullptr) {
    return Reply::fail(ErrorCode::kConflict, "key '" + set.key + "' exists (NX)");
  }
  if (set.condition == CompatCondition::kIfPresent && old == nullptr) {
    return Reply::fail(ErrorCode::kConflict, "key '" + set.key + "' does not exist (XX)");
  }
  if (old == nullptr && c.s.sessions.size() >= lim.max_sessions) {
    return Reply::fail(ErrorCode::kLimitExceeded, "session count " + num(c.s.sessions.size()) +
                                                      " is at max_sessions " + num(lim.max_sessions));
  }
  if (old == nullptr && c.s.locks.size() >= lim.max_locks) {
    return Reply::fail(ErrorCode::kLimitExceeded, "lock count " + num(c.s.locks.size()) +
                                                      " is at max_locks " + num(lim.max_locks));
  }

  if (Reply r = check_session_id_space(c); r.is_error()) return r;

  Reply reply;
  if (set.return_old && old != nullptr) reply.value = old->value;
  if (old != nullptr) end_session(c, old->session, EndKind::kReplace);  // frees key, lock, value

  const SessionId id = new_session_id(c);
  Session& sess = c.s.sessions[id];
  note_session_opened(c.s, id);
  sess.ttl_ms = session_ttl(set.ttl_ms);
  sess.opened_at = c.now;
  sess.set_labels("compat", "");
  sess.compat = true;
  const auto it = c.s.locks.try_emplace(set.key).first;
  Lock& l = it->second;
  l.compat = true;
  // The key's lock is exclusive: the old holder (if any) was ended above.
  LEASEHOLD_ASSERT(l.holders.empty(), "compat key '{}' still has {} holder(s)", set.key, l.holders.size());
  LEASEHOLD_ASSERT(c.rev >= l.last_token, "compat token {} below last token {}", c.rev, l.last_token);
  l.holders.push_back(Holder{id, c.rev, c.now, 0, 0, LockMode::kExclusive});
  l.last_token = c.rev;
  sess.lock_list().push_back(&*it);
  c.s.compat[set.key] = CompatValue{set.value, c.rev, id};
  c.effects.emplace_back(SessionStarted{id, set.ttl_ms});
  reply.token = c.rev;
  reply.session = id;
  return reply;
}

Reply apply_compat_delete(Ctx& c, const CompatDelete& del) {
  const Limits& lim = c.s.limits;
  if (!name_ok(lim, del.key)) return bad_name(lim, "key", del.key);
  if (del.if_value) {
    if (Reply r = check_value(lim, *del.if_value); r.is_error()) return r;
  }
  Reply reply;
  const auto it = c.s.compat.find(del.key);
  if (it == c.s.compat.end()) return reply;  // absent (or held natively): 0 deleted
  if (del.if_value && *del.if_value != it->second.value) return reply;
  end_session(c, it->second.session, EndKind::kClose);
  reply.count = 1;
  return reply;
}

}  // namespace leasehold::core::detail
