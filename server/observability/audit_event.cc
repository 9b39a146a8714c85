#include "server/observability/audit_event.h"

#include <type_traits>
#include <variant>

namespace leasehold::server {
namespace {

std::int64_t since(core::LogMillis now, core::LogMillis then) {
  return now >= then ? static_cast<std::int64_t>(now - then) : 0;
}

std::string owner_of(const core::StateMachine& state, core::SessionId session) {
  auto info = state.session(session);
  return info ? info->owner : std::string();
}

}  // namespace

std::string_view audit_kind_name(AuditKind kind) {
  switch (kind) {
    case AuditKind::kGrant: return "grant";
    case AuditKind::kRelease: return "release";
    case AuditKind::kExpiry: return "expiry";
    case AuditKind::kRevoke: return "revoke";
    case AuditKind::kKill: return "kill";
    case AuditKind::kLockDelay: return "lock-delay";
    case AuditKind::kLeaseEnded: return "lease-ended";
    case AuditKind::kTransfer: return "transfer";
  }
  return "unknown";
}

std::string_view audit_cause_text(AuditCause cause) {
  switch (cause) {
    case AuditCause::kUnknown: return "unknown";
    case AuditCause::kAcquired: return "acquired";
    case AuditCause::kGrantedFromQueue: return "granted from the queue";
    case AuditCause::kCompatSet: return "compat set";
    case AuditCause::kReleased: return "released";
    case AuditCause::kReleasedByOther: return "released by another connection";
    case AuditCause::kSessionClosed: return "session closed";
    case AuditCause::kCompatDelete: return "compat delete";
    case AuditCause::kCompatReplaced: return "compat key replaced";
    case AuditCause::kSessionExpired: return "session expired";
    case AuditCause::kSessionKilled: return "session killed";
    case AuditCause::kRevoked: return "revoked";
    case AuditCause::kLockDelay: return "lock-delay after the holder's session ended";
    case AuditCause::kLeaseEnded: return "lease ended";
    case AuditCause::kTransferred: return "transferred to another session";
    case AuditCause::kTransferredIn: return "received by transfer";
    case AuditCause::kConnectionClosed: return "closed";
  }
  return "unknown";
}

AuditCause audit_cause_of(std::string_view reason) {
  for (auto c = static_cast<std::uint8_t>(AuditCause::kAcquired); c <= kAuditCauseMax; ++c) {
    if (reason == audit_cause_text(static_cast<AuditCause>(c))) return static_cast<AuditCause>(c);
  }
  // An operator's revoke or kill names who asked ("revoked by alice").
  for (AuditCause cause : {AuditCause::kRevoked, AuditCause::kSessionKilled}) {
    const std::string_view text = audit_cause_text(cause);
    if (reason.starts_with(text) && reason.substr(text.size()).starts_with(" by ")) return cause;
  }
  return AuditCause::kUnknown;
}

void EventDeriver::reset(const core::StateMachine& state) {
  holds_.clear();
  holders_.clear();
  queued_.clear();
  for (const core::LockInfo& lock : state.locks("", SIZE_MAX)) {
    for (const core::HolderInfo& h : lock.holders) {
      holds_[{h.session, lock.name}] = Hold{h.token, h.acquired_at, h.owner};
      holders_.emplace(lock.name, h.session);
    }
    for (const core::WaiterInfo& w : lock.waiters) queued_[{w.session, lock.name}] = w.queued_at;
  }
}

void EventDeriver::grant(const std::string& lock, core::SessionId session, core::Token token, AuditCause cause,
                         core::LogMillis now, const core::StateMachine& after, std::vector<AuditEvent>& out) {
  const KeyView key{session, lock};
  auto held = holds_.find(key);
  if (held != holds_.end() && held->second.token == token) return;  // an idempotent retry's reply
  AuditEvent e;
  e.kind = AuditKind::kGrant;
  e.lock = lock;
  e.session = session;
  e.owner = owner_of(after, session);
  e.token = token;
  e.cause = cause;
  e.reason = audit_cause_text(cause);
  if (auto q = queued_.find(key); q != queued_.end()) {
    e.wait_ms = since(now, q->second);
    queued_.erase(q);
  }
  if (held != holds_.end()) {
    held->second = Hold{token, now, e.owner};
  } else {
    holds_.emplace(Key{session, lock}, Hold{token, now, e.owner});
  }
  if (holders_.find(std::pair{std::string_view(lock), session}) == holders_.end()) holders_.emplace(lock, session);
  out.push_back(std::move(e));
}

void EventDeriver::end_hold(AuditKind kind, const std::string& lock, core::SessionId session, core::Token token,
                            AuditCause cause, core::LogMillis now, std::vector<AuditEvent>& out) {
  AuditEvent e;
  e.kind = kind;
  e.lock = lock;
  e.session = session;
  e.token = token;
  e.cause = cause;
  e.reason = audit_cause_text(cause);
  if (auto h = holds_.find(KeyView{session, lock}); h != holds_.end()) {
    e.owner = h->second.owner;
    e.hold_ms = since(now, h->second.since);
    if (e.token == 0) e.token = h->second.token;
    holds_.erase(h);
  }
  if (auto b = holders_.find(std::pair{std::string_view(lock), session}); b != holders_.end()) holders_.erase(b);
  out.push_back(std::move(e));
}

void EventDeriver::forget_session(core::SessionId session) {
  for (auto it = queued_.lower_bound(KeyView{session, {}}); it != queued_.end() && it->first.first == session;) {
    it = queued_.erase(it);
  }
}

std::vector<AuditEvent> EventDeriver::derive(const core::Command& command, const core::ApplyResult& result,
                                             const core::StateMachine& after) {
  std::vector<AuditEvent> out;
  derive_into(command, result, after, out);
  return out;
}

void EventDeriver::derive_into(const core::Command& command, const core::ApplyResult& result,
                               const core::StateMachine& after, std::vector<AuditEvent>& out) {
  out.clear();
  if (result.reply.is_error()) return;
  const core::LogMillis now = command.now;
  const core::Reply& reply = result.reply;
  // The command's own outcome (grants now, releases, closes), then its effects.
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, core::Acquire>) {
          if (reply.code == core::ReplyCode::kOk && reply.token != 0) {
            grant(body.lock, body.session, reply.token, AuditCause::kAcquired, now, after, out);
          } else if (reply.code == core::ReplyCode::kQueued) {
            queued_.emplace(Key{body.session, body.lock}, now);
          }
        } else if constexpr (std::is_same_v<T, core::Release>) {
          end_hold(AuditKind::kRelease, body.lock, body.session, body.token,
                   body.by_other ? AuditCause::kReleasedByOther : AuditCause::kReleased, now, out);
        } else if constexpr (std::is_same_v<T, core::CloseSession>) {
          std::vector<std::string> locks;
          for (auto it = holds_.lower_bound(KeyView{body.session, {}});
               it != holds_.end() && it->first.first == body.session; ++it) {
            locks.push_back(it->first.second);
          }
          for (const std::string& lock : locks) {
            end_hold(AuditKind::kRelease, lock, body.session, 0, AuditCause::kSessionClosed, now, out);
          }
        } else if constexpr (std::is_same_v<T, core::CompatSet>) {
          if (auto v = after.compat_get(body.key); v && reply.token != 0) {
            grant(body.key, v->session, reply.token, AuditCause::kCompatSet, now, after, out);
          }
        } else if constexpr (std::is_same_v<T, core::CompatDelete>) {
          if (reply.count == 1) {
            // The key's holder: the first (key, session) at or after (key, 0).
            auto b = holders_.lower_bound(std::pair{std::string_view(body.key), core::SessionId{0}});
            if (b != holders_.end() && b->first == body.key) {
              end_hold(AuditKind::kRelease, body.key, b->second, 0, AuditCause::kCompatDelete, now, out);
            }
          }
        } else if constexpr (std::is_same_v<T, core::Transfer>) {
          end_hold(AuditKind::kTransfer, body.lock, body.from, body.token, AuditCause::kTransferred, now, out);
          grant(body.lock, body.to, reply.token, AuditCause::kTransferredIn, now, after, out);
        } else if constexpr (std::is_same_v<T, core::ConnectionClosed>) {
          AuditEvent e;  // ONCLOSE: ends like an expiry, reason "closed"
          e.kind = AuditKind::kExpiry;
          e.session = body.session;
          e.cause = AuditCause::kConnectionClosed;
          e.reason = audit_cause_text(e.cause);
          out.push_back(std::move(e));
        } else if constexpr (std::is_same_v<T, core::ExpireSession> || std::is_same_v<T, core::KillSession>) {
          AuditEvent e;
          e.kind = std::is_same_v<T, core::KillSession> ? AuditKind::kKill : AuditKind::kExpiry;
          e.session = body.session;
          e.cause = std::is_same_v<T, core::KillSession> ? AuditCause::kSessionKilled : AuditCause::kSessionExpired;
          e.reason = audit_cause_text(e.cause);
          // The owner, from one of its holds (still recorded here: its
          // locks' ends are derived from the effects below). A session that
          // held nothing has no owner on record.
          if (auto h = holds_.lower_bound(KeyView{body.session, {}});
              h != holds_.end() && h->first.first == body.session) {
            e.owner = h->second.owner;
          }
          out.push_back(std::move(e));
        }
      },
      command.body);

  std::set<std::string> delayed;
  for (const core::Effect& effect : result.effects) {
    if (const auto* g = std::get_if<core::Granted>(&effect)) {
      if (std::holds_alternative<core::Transfer>(command.body)) continue;  // recorded from the command, above
      grant(g->lock, g->session, g->token, AuditCause::kGrantedFromQueue, now, after, out);
    } else if (const auto* l = std::get_if<core::LockLost>(&effect)) {
      switch (l->reason) {
        case core::LossReason::kExpired:
          end_hold(AuditKind::kExpiry, l->lock, l->session, l->token, AuditCause::kSessionExpired, now, out);
          break;
        case core::LossReason::kKilled:
          end_hold(AuditKind::kKill, l->lock, l->session, l->token, AuditCause::kSessionKilled, now, out);
          break;
        case core::LossReason::kRevoked:
          end_hold(AuditKind::kRevoke, l->lock, l->session, l->token, AuditCause::kRevoked, now, out);
          break;
        case core::LossReason::kReplaced:
          end_hold(AuditKind::kRelease, l->lock, l->session, l->token, AuditCause::kCompatReplaced, now, out);
          break;
        case core::LossReason::kClosed:  // only ConnectionClosed loses a hold as "closed"
          end_hold(AuditKind::kExpiry, l->lock, l->session, l->token, AuditCause::kConnectionClosed, now, out);
          break;
        case core::LossReason::kReleasedByOther:
          break;  // recorded from the Release command itself, above
        case core::LossReason::kLeaseEnded:
          end_hold(AuditKind::kLeaseEnded, l->lock, l->session, l->token, AuditCause::kLeaseEnded, now, out);
          break;
        case core::LossReason::kTransferred:
          break;  // recorded from the Transfer command itself, above
      }
      if (l->reason == core::LossReason::kExpired || l->reason == core::LossReason::kKilled ||
          l->reason == core::LossReason::kLeaseEnded || l->reason == core::LossReason::kClosed) {
        auto info = after.lock(l->lock);
        if (info && info->delay_until > now && delayed.insert(l->lock).second) {
          AuditEvent e;
          e.kind = AuditKind::kLockDelay;
          e.lock = l->lock;
          e.session = l->session;
          e.token = l->token;
          e.cause = AuditCause::kLockDelay;
          e.reason = audit_cause_text(e.cause);
          e.delay_ms = static_cast<std::int64_t>(info->delay_until - now);
          out.push_back(std::move(e));
        }
      }
    } else if (const auto* w = std::get_if<core::WaitEnded>(&effect)) {
      if (auto q = queued_.find(KeyView{w->session, w->lock}); q != queued_.end()) queued_.erase(q);
    } else if (const auto* s = std::get_if<core::SessionEnded>(&effect)) {
      forget_session(s->session);
    }
  }
}

}  // namespace leasehold::server
