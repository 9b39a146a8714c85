// tests/core/reference_model.h: a deliberately simple reference model of the
// lock state machine's semantics (docs/core.md), written separately from
// core/ with plain vectors and ordered maps and linear scans. The differential
// test feeds it and the real StateMachine the same commands and compares
// replies (code, error code, token, session, count, value) and effects.
// Error messages are not compared (the model writes none).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/state_machine.h"

namespace leasehold::core::testing {

class ReferenceModel {
 public:
  explicit ReferenceModel(Limits limits) : lim_(limits) {}

  ApplyResult apply(const Command& c) {
    ApplyResult out;
    fx_ = &out.effects;
    now_ = std::max(c.now, last_now_);
    rev_ = revision_ + 1;
    seq_ = c.seq;
    if (c.seq != 0) {
      if (c.session == 0) return err(out, ErrorCode::kInvalidArgument);
      Sess* s = find_session(c.session);
      if (s == nullptr) return err(out, ErrorCode::kSessionExpired);
      if (s->cache.count(c.seq) != 0) {
        out.reply = s->cache[c.seq];
        return out;
      }
      if (s->has_cache && s->high >= lim_.idempotence_window && c.seq <= s->high - lim_.idempotence_window) {
        return err(out, ErrorCode::kInvalidArgument);
      }
    }
    const SessionId actor = actor_of(c.body);
    if (c.session != 0 && actor != 0 && actor != c.session) return err(out, ErrorCode::kInvalidArgument);

    out.reply = std::visit([this](const auto& b) { return run(b); }, c.body);
    if (out.reply.is_error() && !out.effects.empty()) out.reply = fail(ErrorCode::kInternal);  // model bug
    if (c.seq != 0 && lim_.idempotence_window > 0) {
      if (Sess* s = find_session(c.session)) {
        s->has_cache = true;
        if (c.seq > s->high) s->high = c.seq;
        s->cache[c.seq] = out.reply;
        if (s->high >= lim_.idempotence_window) {
          std::erase_if(s->cache, [&](const auto& kv) { return kv.first <= s->high - lim_.idempotence_window; });
        }
      }
    }
    if (!out.reply.is_error()) {
      revision_ = rev_;
      last_now_ = now_;
      sweep();
    }
    return out;
  }

 private:
  struct Sess {
    SessionId id = 0;
    bool compat = false;
    bool has_cache = false;
    std::uint64_t high = 0;
    std::map<std::uint64_t, Reply> cache;
    std::string user;   // OpenSession::user
    std::string reqid;  // OpenSession::reqid ("" = none)
  };
  struct Member {  // a holder or a waiter
    SessionId session = 0;
    LockMode mode = LockMode::kExclusive;
    Token token = 0;
    std::uint64_t seq = 0;
    std::uint64_t delay_ms = 0;
    std::uint64_t lease_ms = 0;   // a waiter's lease length (Acquire::lease_ms)
    LogMillis lease_until = 0;    // a holder's lease end (0 = none)
  };
  struct RLock {
    bool sem = false;
    std::uint32_t limit = 1;
    bool compat = false;
    std::vector<Member> holders;
    std::vector<Member> waiters;
    LogMillis delay_until = 0;
  };

  static Reply fail(ErrorCode code) { return Reply::fail(code, ""); }
  ApplyResult& err(ApplyResult& out, ErrorCode code) {
    out.reply = fail(code);
    return out;
  }
  static SessionId actor_of(const CommandBody& b) {
    if (auto* x = std::get_if<Acquire>(&b)) return x->session;
    if (auto* x = std::get_if<Release>(&b)) return x->session;
    if (auto* x = std::get_if<CancelWait>(&b)) return x->session;
    if (auto* x = std::get_if<CloseSession>(&b)) return x->session;
    if (auto* x = std::get_if<SetSessionTtl>(&b)) return x->session;
    if (auto* x = std::get_if<ExtendLease>(&b)) return x->session;
    if (auto* x = std::get_if<Transfer>(&b)) return x->from;
    return 0;
  }
  Sess* find_session(SessionId id) {
    for (Sess& s : sessions_) {
      if (s.id == id) return &s;
    }
    return nullptr;
  }
  static int index_of(const std::vector<Member>& v, SessionId id) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].session == id) return static_cast<int>(i);
    }
    return -1;
  }
  bool name_bad(const std::string& n, ErrorCode& code) const {
    if (n.empty()) code = ErrorCode::kInvalidArgument;
    else if (n.size() > lim_.max_name_bytes) code = ErrorCode::kLimitExceeded;
    else return false;
    return true;
  }
  std::optional<ErrorCode> ttl_bad(std::uint64_t ttl) const {
    if (ttl == 0 || ttl < lim_.min_ttl_ms) return ErrorCode::kInvalidArgument;
    if (ttl > lim_.max_ttl_ms) return ErrorCode::kLimitExceeded;
    return std::nullopt;
  }
  void set_cached(SessionId id, std::uint64_t seq, const Reply& r) {
    Sess* s = find_session(id);
    if (s != nullptr && seq != 0 && s->cache.count(seq) != 0) s->cache[seq] = r;
  }
  bool fits(const RLock& l, LockMode mode) const {
    if (l.holders.size() >= lim_.max_holders_per_lock) return false;
    if (l.sem) return l.holders.size() < l.limit;
    if (mode == LockMode::kExclusive) return l.holders.empty();
    for (const Member& h : l.holders) {
      if (h.mode != LockMode::kShared) return false;
    }
    return true;
  }
  // Grants from the head of the queue while possible; forgets an idle lock.
  void grant(const std::string& name) {
    RLock& l = locks_[name];
    if (l.delay_until > now_) return;
    l.delay_until = 0;
    while (!l.waiters.empty() && fits(l, l.waiters.front().mode)) {
      Member m = l.waiters.front();
      l.waiters.erase(l.waiters.begin());
      m.token = rev_;
      m.lease_until = m.lease_ms == 0 ? 0 : now_ + m.lease_ms;
      l.holders.push_back(m);
      fx_->emplace_back(Granted{name, m.session, m.seq, rev_});
      if (m.lease_until != 0) fx_->emplace_back(LeaseDeadline{name, m.session, rev_, m.lease_until});
      Reply r;
      r.token = rev_;
      set_cached(m.session, m.seq, r);
    }
    if (l.holders.empty() && l.waiters.empty()) locks_.erase(name);
  }
  void sweep() {
    std::vector<std::pair<LogMillis, std::string>> due;
    for (auto& [name, l] : locks_) {
      if (l.delay_until != 0 && l.delay_until <= now_) due.emplace_back(l.delay_until, name);
    }
    std::sort(due.begin(), due.end());
    for (auto& [at, name] : due) grant(name);
  }
  enum class End { kClose, kExpire, kKill, kReplace, kRevoke, kConnectionClosed };
  void end(SessionId id, End how) {
    std::vector<std::string> names;
    for (auto& [name, l] : locks_) {
      if (index_of(l.holders, id) >= 0 || index_of(l.waiters, id) >= 0) names.push_back(name);
    }
    for (const std::string& name : names) {
      RLock& l = locks_[name];
      if (l.compat) compat_.erase(name);
      const int h = index_of(l.holders, id);
      if (h >= 0) {
        const Member m = l.holders[static_cast<std::size_t>(h)];
        l.holders.erase(l.holders.begin() + h);
        static const LossReason kReason[] = {LossReason::kClosed,   LossReason::kExpired, LossReason::kKilled,
                                             LossReason::kReplaced, LossReason::kRevoked, LossReason::kClosed};
        if (how != End::kClose) fx_->emplace_back(LockLost{name, id, m.token, kReason[static_cast<int>(how)]});
        if ((how == End::kExpire || how == End::kKill || how == End::kConnectionClosed) && m.delay_ms > 0) {
          l.delay_until = std::max(l.delay_until, now_ + m.delay_ms);
          fx_->emplace_back(WakeAt{l.delay_until});
        }
      } else {
        const int w = index_of(l.waiters, id);
        const std::uint64_t seq = l.waiters[static_cast<std::size_t>(w)].seq;
        l.waiters.erase(l.waiters.begin() + w);
        fx_->emplace_back(WaitEnded{name, id, seq, WaitEndReason::kSessionEnded});
      }
      grant(name);
    }
    SessionEndReason reason = SessionEndReason::kClosed;
    if (how == End::kExpire) reason = SessionEndReason::kExpired;
    if (how == End::kKill || how == End::kRevoke) reason = SessionEndReason::kKilled;
    fx_->emplace_back(SessionEnded{id, reason});
    std::erase_if(sessions_, [id](const Sess& s) { return s.id == id; });
  }

  Reply run(const OpenSession& o) {
    if (!o.reqid.empty()) {
      if (o.reqid.size() > lim_.max_reqid_bytes) return fail(ErrorCode::kLimitExceeded);
      for (char ch : o.reqid) {
        if (ch <= ' ' || ch >= 0x7f) return fail(ErrorCode::kInvalidArgument);
      }
      for (const Sess& s : sessions_) {  // a retry: the live session with this (user, reqid)
        if (s.reqid == o.reqid && s.user == o.user) {
          Reply r;
          r.session = s.id;
          return r;
        }
      }
    }
    if (auto e = ttl_bad(o.ttl_ms)) return fail(*e);
    if (o.close_grace_ms && *o.close_grace_ms > o.ttl_ms) return fail(ErrorCode::kInvalidArgument);
    if (o.owner.size() > lim_.max_owner_bytes || o.user.size() > lim_.max_owner_bytes ||
        sessions_.size() >= lim_.max_sessions) {
      return fail(ErrorCode::kLimitExceeded);
    }
    const SessionId id = new_id();
    sessions_.push_back(Sess{id, false, false, 0, {}, o.user, o.reqid});
    fx_->emplace_back(SessionStarted{id, o.ttl_ms});
    Reply r;
    r.session = id;
    return r;
  }
  // A session id: the revision, below the shard's id once one is recorded.
  SessionId new_id() const { return (static_cast<SessionId>(shard_) << kShardIdShift) | rev_; }
  Reply run(const SetOwnedSlots& o) {
    for (const slots::SlotRange& r : o.slots) {  // the generator sends one range
      if (r.last < r.first || r.last >= slots::kSlotCount) return fail(ErrorCode::kInvalidArgument);
    }
    if (o.shard == 0 || o.shard > kMaxShardId) return fail(ErrorCode::kInvalidArgument);
    if (shard_ != 0 && shard_ != o.shard) return fail(ErrorCode::kConflict);
    shard_ = o.shard;
    return Reply::ok();
  }
  Reply run(const CloseSession& o) {
    if (find_session(o.session) == nullptr) return fail(ErrorCode::kSessionExpired);
    end(o.session, End::kClose);
    return Reply::ok();
  }
  Reply run(const ExpireSession& o) {
    if (find_session(o.session) == nullptr) return fail(ErrorCode::kNotFound);
    end(o.session, End::kExpire);
    return Reply::ok();
  }
  Reply run(const KillSession& o) {
    if (find_session(o.session) == nullptr) return fail(ErrorCode::kNotFound);
    end(o.session, End::kKill);
    return Reply::ok();
  }
  Reply run(const ConnectionClosed& o) {  // ONCLOSE: an expiry with reason closed
    if (find_session(o.session) == nullptr) return fail(ErrorCode::kNotFound);
    end(o.session, End::kConnectionClosed);
    return Reply::ok();
  }
  Reply run(const SetSessionTtl& o) {
    Sess* s = find_session(o.session);
    if (s == nullptr) return fail(ErrorCode::kSessionExpired);
    if (!(s->compat && o.ttl_ms == 0)) {
      if (auto e = ttl_bad(o.ttl_ms)) return fail(*e);
    }
    fx_->emplace_back(SessionTtlChanged{o.session, o.ttl_ms});
    return Reply::ok();
  }
  Reply run(const Acquire& a) {
    ErrorCode code{};
    if (name_bad(a.lock, code)) return fail(code);
    Sess* s = find_session(a.session);
    if (a.session == 0 || s == nullptr) return fail(ErrorCode::kSessionExpired);
    if (s->compat) return fail(ErrorCode::kInvalidArgument);
    const int mode = static_cast<int>(a.mode);
    if (mode > 2) return fail(ErrorCode::kInvalidArgument);
    const bool sem = a.mode == LockMode::kSemaphore;
    if ((!sem && a.limit != 1) || (sem && a.limit == 0)) return fail(ErrorCode::kInvalidArgument);
    if (sem && a.limit > lim_.max_holders_per_lock) return fail(ErrorCode::kLimitExceeded);
    if (!a.wait && a.wait_ms != 0) return fail(ErrorCode::kInvalidArgument);
    if (a.wait_ms > lim_.max_wait_ms || a.delay_ms > lim_.max_delay_ms || a.lease_ms > kMaxSessionTtlMs) {
      return fail(ErrorCode::kLimitExceeded);
    }
    Member me{a.session, a.mode, rev_, seq_, a.delay_ms, a.lease_ms, 0};
    Reply granted;
    granted.token = rev_;
    // A grant now starts its lease now.
    const auto grant_now = [&](RLock& l) {
      me.lease_until = a.lease_ms == 0 ? 0 : now_ + a.lease_ms;
      l.holders.push_back(me);
      if (me.lease_until != 0) fx_->emplace_back(LeaseDeadline{a.lock, a.session, rev_, me.lease_until});
    };
    auto it = locks_.find(a.lock);
    if (it == locks_.end()) {
      if (locks_.size() >= lim_.max_locks || lim_.max_holders_per_lock == 0) return fail(ErrorCode::kLimitExceeded);
      RLock l;
      l.sem = sem;
      l.limit = a.limit;
      grant_now(l);
      locks_[a.lock] = l;
      return granted;
    }
    RLock& l = it->second;
    if (l.compat || l.sem != sem || (sem && l.limit != a.limit)) return fail(ErrorCode::kConflict);
    if (index_of(l.holders, a.session) >= 0 || index_of(l.waiters, a.session) >= 0) {
      return fail(ErrorCode::kConflict);
    }
    if (l.delay_until <= now_ && l.waiters.empty() && fits(l, a.mode)) {
      l.delay_until = 0;
      grant_now(l);
      return granted;
    }
    if (!a.wait) return fail(ErrorCode::kWouldBlock);
    if (l.waiters.size() >= lim_.max_waiters_per_lock) return fail(ErrorCode::kLimitExceeded);
    l.waiters.push_back(me);
    if (a.wait_ms != 0) fx_->emplace_back(WaitDeadline{a.lock, a.session, now_ + a.wait_ms});
    Reply q;
    q.code = ReplyCode::kQueued;
    return q;
  }
  Reply run(const Release& r) {
    ErrorCode code{};
    if (name_bad(r.lock, code)) return fail(code);
    if (r.session == 0 || find_session(r.session) == nullptr) return fail(ErrorCode::kSessionExpired);
    auto it = locks_.find(r.lock);
    if (it == locks_.end()) return fail(ErrorCode::kNotHolder);
    const int h = index_of(it->second.holders, r.session);
    if (h < 0) return fail(ErrorCode::kNotHolder);
    if (it->second.holders[static_cast<std::size_t>(h)].token != r.token) return fail(ErrorCode::kStaleToken);
    if (it->second.compat) return fail(ErrorCode::kConflict);
    if (r.by_other) fx_->emplace_back(LockLost{r.lock, r.session, r.token, LossReason::kReleasedByOther});
    const Member& m = it->second.holders[static_cast<std::size_t>(h)];
    set_cached(m.session, m.seq, fail(ErrorCode::kWouldBlock));  // a retry is not told it holds
    it->second.holders.erase(it->second.holders.begin() + h);
    grant(r.lock);
    return Reply::ok();
  }
  Reply end_wait(const std::string& lock, SessionId id, WaitEndReason why) {
    ErrorCode code{};
    if (name_bad(lock, code)) return fail(code);
    if (find_session(id) == nullptr) {
      return fail(why == WaitEndReason::kCancelled ? ErrorCode::kSessionExpired : ErrorCode::kNotFound);
    }
    auto it = locks_.find(lock);
    if (it == locks_.end()) return fail(ErrorCode::kNotFound);
    const int w = index_of(it->second.waiters, id);
    if (w < 0) return fail(ErrorCode::kNotFound);
    const std::uint64_t seq = it->second.waiters[static_cast<std::size_t>(w)].seq;
    it->second.waiters.erase(it->second.waiters.begin() + w);
    fx_->emplace_back(WaitEnded{lock, id, seq, why});
    set_cached(id, seq, fail(why == WaitEndReason::kTimedOut ? ErrorCode::kTimedOut : ErrorCode::kWouldBlock));
    grant(lock);
    return Reply::ok();
  }
  Reply run(const CancelWait& w) { return end_wait(w.lock, w.session, WaitEndReason::kCancelled); }
  Reply run(const TimeoutWait& w) { return end_wait(w.lock, w.session, WaitEndReason::kTimedOut); }
  Reply run(const Revoke& r) {
    ErrorCode code{};
    if (name_bad(r.lock, code)) return fail(code);
    auto it = locks_.find(r.lock);
    if (it == locks_.end() || it->second.holders.empty()) return fail(ErrorCode::kNotFound);
    if (it->second.compat) {
      end(it->second.holders.front().session, End::kRevoke);
      return Reply::ok();
    }
    for (const Member& h : it->second.holders) {
      fx_->emplace_back(LockLost{r.lock, h.session, h.token, LossReason::kRevoked});
      set_cached(h.session, h.seq, fail(ErrorCode::kWouldBlock));
    }
    it->second.holders.clear();
    grant(r.lock);
    return Reply::ok();
  }
  Reply run(const Tick&) { return Reply::ok(); }
  // The grant of (lock, session, token), or nullptr; `code` says why not,
  // in the order the core checks (name, session, holder, token).
  Member* held(const std::string& lock, SessionId session, Token token, ErrorCode& code) {
    if (name_bad(lock, code)) return nullptr;
    if (session == 0 || find_session(session) == nullptr) {
      code = ErrorCode::kSessionExpired;
      return nullptr;
    }
    auto it = locks_.find(lock);
    const int h = it == locks_.end() ? -1 : index_of(it->second.holders, session);
    if (h < 0) {
      code = ErrorCode::kNotHolder;
      return nullptr;
    }
    Member& m = it->second.holders[static_cast<std::size_t>(h)];
    if (m.token != token) {
      code = ErrorCode::kStaleToken;
      return nullptr;
    }
    return &m;
  }
  Reply run(const EndLease& e) {
    ErrorCode code{};
    if (name_bad(e.lock, code)) return fail(code);
    auto it = locks_.find(e.lock);
    const int h = it == locks_.end() ? -1 : index_of(it->second.holders, e.session);
    if (h < 0) return fail(ErrorCode::kNotFound);
    RLock& l = it->second;
    const Member m = l.holders[static_cast<std::size_t>(h)];
    if (m.token != e.token || m.lease_until == 0 || m.lease_until > now_) return fail(ErrorCode::kNotFound);
    fx_->emplace_back(LockLost{e.lock, e.session, m.token, LossReason::kLeaseEnded});
    set_cached(m.session, m.seq, fail(ErrorCode::kWouldBlock));
    l.holders.erase(l.holders.begin() + h);
    if (m.delay_ms > 0) {
      l.delay_until = std::max(l.delay_until, now_ + m.delay_ms);
      fx_->emplace_back(WakeAt{l.delay_until});
    }
    grant(e.lock);
    return Reply::ok();
  }
  Reply run(const ExtendLease& e) {
    if (e.lease_ms == 0) return fail(ErrorCode::kInvalidArgument);
    if (e.lease_ms > kMaxSessionTtlMs) return fail(ErrorCode::kLimitExceeded);
    ErrorCode code{};
    Member* m = held(e.lock, e.session, e.token, code);
    if (m == nullptr) return fail(code);
    if (m->lease_until == 0) return fail(ErrorCode::kConflict);
    m->lease_until = now_ + e.lease_ms;
    fx_->emplace_back(LeaseDeadline{e.lock, e.session, e.token, m->lease_until});
    return Reply::ok();
  }
  Reply run(const Transfer& t) {
    ErrorCode code{};
    Member* m = held(t.lock, t.from, t.token, code);
    if (m == nullptr) return fail(code);
    RLock& l = locks_[t.lock];
    if (l.compat || t.to == t.from) return fail(ErrorCode::kInvalidArgument);
    Sess* to = t.to == 0 ? nullptr : find_session(t.to);
    if (to == nullptr) return fail(ErrorCode::kNotFound);
    if (to->compat) return fail(ErrorCode::kInvalidArgument);
    if (index_of(l.holders, t.to) >= 0 || index_of(l.waiters, t.to) >= 0) return fail(ErrorCode::kConflict);
    fx_->emplace_back(LockLost{t.lock, t.from, m->token, LossReason::kTransferred});
    set_cached(m->session, m->seq, fail(ErrorCode::kWouldBlock));
    m->session = t.to;
    m->token = rev_;
    m->seq = 0;
    fx_->emplace_back(Granted{t.lock, t.to, 0, rev_});
    if (m->lease_until != 0) fx_->emplace_back(LeaseDeadline{t.lock, t.to, rev_, m->lease_until});
    Reply r;
    r.token = rev_;
    return r;
  }
  // The node proposes Reopen only after a start it cannot prove complete;
  // the random commands never generate it (tests/core/reopen_test.cc covers
  // it). Here only its revision floor is modelled.
  Reply run(const Reopen& r) {
    if (r.revision_floor > rev_) rev_ = r.revision_floor;
    return Reply::ok();
  }
  Reply run(const FencePut& p) {
    ErrorCode code{};
    if (name_bad(p.key, code) || name_bad(p.lock, code)) return fail(code);
    if (p.value.size() > lim_.max_value_bytes) return fail(ErrorCode::kLimitExceeded);
    auto it = locks_.find(p.lock);
    bool ok = false;
    if (it != locks_.end()) {
      for (const Member& h : it->second.holders) ok = ok || h.token == p.token;
    }
    if (!ok) return fail(ErrorCode::kStaleToken);
    auto f = fence_.find(p.key);
    if (f != fence_.end() && f->second.second > p.token) return fail(ErrorCode::kStaleToken);
    if (f == fence_.end() && fence_.size() >= lim_.max_fence_keys) return fail(ErrorCode::kLimitExceeded);
    fence_[p.key] = {p.value, p.token};
    Reply r;
    r.token = p.token;
    return r;
  }
  Reply run(const CompatSet& s) {
    ErrorCode code{};
    if (name_bad(s.key, code)) return fail(code);
    if (s.value.size() > lim_.max_value_bytes) return fail(ErrorCode::kLimitExceeded);
    if (s.ttl_ms != 0 && s.ttl_ms < lim_.min_ttl_ms) return fail(ErrorCode::kInvalidArgument);
    if (s.ttl_ms > lim_.max_ttl_ms) return fail(ErrorCode::kLimitExceeded);
    if (static_cast<int>(s.condition) > 2) return fail(ErrorCode::kInvalidArgument);
    auto it = locks_.find(s.key);
    if (it != locks_.end() && !it->second.compat) return fail(ErrorCode::kConflict);
    const bool present = it != locks_.end();
    if (s.condition == CompatCondition::kIfAbsent && present) return fail(ErrorCode::kConflict);
    if (s.condition == CompatCondition::kIfPresent && !present) return fail(ErrorCode::kConflict);
    if (!present && (sessions_.size() >= lim_.max_sessions || locks_.size() >= lim_.max_locks)) {
      return fail(ErrorCode::kLimitExceeded);
    }
    Reply r;
    if (present) {
      if (s.return_old) r.value = compat_[s.key].value;
      end(compat_[s.key].session, End::kReplace);
    }
    const SessionId id = new_id();
    sessions_.push_back(Sess{id, true, false, 0, {}, {}, {}});
    RLock l;
    l.compat = true;
    l.holders.push_back(Member{id, LockMode::kExclusive, rev_, 0, 0});
    locks_[s.key] = l;
    compat_[s.key] = CompatValue{s.value, rev_, id};
    fx_->emplace_back(SessionStarted{id, s.ttl_ms});
    r.token = rev_;
    r.session = id;
    return r;
  }
  Reply run(const CompatDelete& d) {
    ErrorCode code{};
    if (name_bad(d.key, code)) return fail(code);
    if (d.if_value && d.if_value->size() > lim_.max_value_bytes) return fail(ErrorCode::kLimitExceeded);
    Reply r;
    auto it = compat_.find(d.key);
    if (it == compat_.end() || (d.if_value && *d.if_value != it->second.value)) return r;
    end(it->second.session, End::kClose);
    r.count = 1;
    return r;
  }

  Limits lim_;
  Revision revision_ = 0;
  LogMillis last_now_ = 0;
  LogMillis now_ = 0;
  Revision rev_ = 0;
  std::uint32_t shard_ = 0;  // SetOwnedSlots: the shard id in the high bits of new session ids
  std::uint64_t seq_ = 0;  // the seq of the command being applied
  std::vector<Effect>* fx_ = nullptr;
  std::vector<Sess> sessions_;
  std::map<std::string, RLock> locks_;
  std::map<std::string, std::pair<std::string, Token>> fence_;
  std::map<std::string, CompatValue> compat_;
};

}  // namespace leasehold::core::testing
