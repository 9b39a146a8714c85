// tests/core/random_commands.h: a seeded generator of random but plausible
// command streams for the property, differential and snapshot tests. It
// peeks at the state machine (holders, waiters) to aim releases and cancels
// at real targets, and mixes in retries of old (session, seq) pairs,
// malformed commands and limit-breaking ones.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/state_machine.h"

namespace leasehold::core::testing {

// LEASEHOLD_SEED overrides the default seed so a failure can be replayed.
inline std::uint64_t seed_from_env(std::uint64_t fallback) {
  const char* s = std::getenv("LEASEHOLD_SEED");
  if (s != nullptr && *s != '\0') return std::strtoull(s, nullptr, 10);
  return fallback;
}

// Small limits so that random streams hit every limit often.
inline Limits small_limits() {
  Limits l;
  l.max_name_bytes = 16;
  l.max_owner_bytes = 8;
  l.max_value_bytes = 8;
  l.max_sessions = 40;
  l.max_locks = 10;
  l.max_fence_keys = 3;
  l.max_waiters_per_lock = 6;
  l.max_holders_per_lock = 4;
  l.min_ttl_ms = 10;
  l.max_ttl_ms = 100'000;
  l.max_wait_ms = 500;
  l.max_delay_ms = 200;
  l.idempotence_window = 4;
  return l;
}

class RandomCommands {
 public:
  explicit RandomCommands(std::uint64_t seed) : rng_(seed) {}

  Command next(const StateMachine& sm) {
    now_ += pick(4) == 0 ? 0 : pick(40);
    if (pick(20) == 0) now_ += 300;  // let delays and deadlines pass
    Command c;
    c.now = pick(100) == 0 ? now_ - std::min<LogMillis>(now_, 50) : now_;  // a late stamp
    const std::uint64_t kind = pick(110);
    if (kind < 8) {
      c.body = open_session();
    } else if (kind < 11) {
      c.body = CloseSession{session()};
      envelope(c, std::get<CloseSession>(c.body).session);
    } else if (kind < 13) {
      c.body = ExpireSession{session()};
    } else if (kind < 15) {
      c.body = ConnectionClosed{session()};  // ONCLOSE: the bound connection closed
    } else if (kind < 17) {
      c.body = KillSession{session()};
    } else if (kind < 19) {
      c.body = SetSessionTtl{session(), ttl()};
      envelope(c, std::get<SetSessionTtl>(c.body).session);
    } else if (kind < 49) {
      c.body = acquire();
      envelope(c, std::get<Acquire>(c.body).session);
    } else if (kind < 64) {
      c.body = release(sm);
      envelope(c, std::get<Release>(c.body).session);
    } else if (kind < 72) {
      auto [lock, s] = waiter(sm);
      if (kind < 68) {
        c.body = CancelWait{lock, s};
        envelope(c, s);
      } else {
        c.body = TimeoutWait{lock, s};
      }
    } else if (kind < 74) {
      c.body = Revoke{lock_name()};
    } else if (kind < 78) {
      c.body = Tick{};
    } else if (kind < 83) {
      const std::string lock = lock_name();
      c.body = FencePut{fence_key(), value(), lock, holder_token(sm, lock)};
    } else if (kind < 89) {
      c.body = CompatSet{compat_key(), value(), pick(3) == 0 ? 0 : ttl(),
                         static_cast<CompatCondition>(pick(25) == 0 ? 3 : pick(3)), pick(2) == 0};
    } else if (kind < 92) {
      std::optional<std::string> if_value;
      if (pick(2) == 0) if_value = value();
      c.body = CompatDelete{compat_key(), if_value};
    } else if (kind >= 100) {
      lease_command(sm, kind - 100, c);
    } else if (kind < 97 && !history_.empty()) {
      c = history_[pick(history_.size())];  // a retry, stamped now
      c.now = now_;
    } else {
      c.body = malformed();
    }
    return c;
  }

  void observe(const Command& c, const ApplyResult& r) {
    if (!r.reply.is_error() && r.reply.session != 0 &&
        (std::holds_alternative<OpenSession>(c.body) || std::holds_alternative<CompatSet>(c.body))) {
      sessions_.push_back(r.reply.session);
    }
    if (c.seq != 0) {
      if (history_.size() < 48) {
        history_.push_back(c);
      } else {
        history_[pick(history_.size())] = c;
      }
    }
  }

  // Forgets ended sessions now and then so that most picks are live.
  void prune(const StateMachine& sm) {
    if (sessions_.size() < 32) return;
    std::erase_if(sessions_, [&sm](SessionId id) { return !sm.session(id); });
  }

 private:
  std::uint64_t pick(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  std::uint64_t ttl() {
    const std::uint64_t k = pick(40);
    if (k == 0) return 0;
    if (k == 1) return 5;        // under min
    if (k == 2) return 200'000;  // over max
    return 500 + pick(4'000);
  }

  SessionId session() {
    if (sessions_.empty() || pick(30) == 0) return pick(2) == 0 ? 0 : 100'000'000 + pick(10);
    return sessions_[sessions_.size() - 1 - pick(std::min<std::size_t>(sessions_.size(), 20))];
  }

  std::string lock_name() {
    static const char* const kNames[] = {"a", "b", "c", "d", "s1", "s2", "k1"};
    if (pick(60) == 0) return pick(2) == 0 ? "" : std::string(17, 'n');
    if (pick(12) == 0) return "x" + std::to_string(pick(12));  // hits max_locks
    return kNames[pick(7)];
  }
  std::string compat_key() {
    static const char* const kKeys[] = {"k1", "k2", "k3", "a"};
    if (pick(80) == 0) return "";
    return kKeys[pick(4)];
  }
  std::string fence_key() {
    static const char* const kKeys[] = {"f1", "f2", "f3", "f4"};
    return pick(80) == 0 ? std::string(17, 'f') : kKeys[pick(4)];
  }
  std::string value() { return pick(30) == 0 ? std::string(9, 'v') : "v" + std::to_string(pick(4)); }

  // Sometimes with a user, an ONCLOSE grace (now and then over the TTL) and a
  // REQID from a small set (so retries and other users' same reqid happen;
  // now and then too long or with a space).
  OpenSession open_session() {
    OpenSession o{ttl(), pick(50) == 0 ? std::string(9, 'o') : "o" + std::to_string(pick(3))};
    if (pick(3) == 0) o.user = "u" + std::to_string(pick(2));
    if (pick(3) == 0) o.close_grace_ms = static_cast<std::uint32_t>(pick(4) == 0 ? o.ttl_ms + 1 : pick(o.ttl_ms + 1));
    const std::uint64_t r = pick(8);
    if (r < 4) o.reqid = "r" + std::to_string(r);
    if (r == 4) o.reqid = pick(2) == 0 ? std::string(65, 'q') : "r 1";
    return o;
  }

  Acquire acquire() {
    Acquire a;
    a.lock = lock_name();
    a.session = session();
    const bool sem_name = a.lock.size() == 2 && a.lock[0] == 's';
    if (sem_name ? pick(15) != 0 : pick(15) == 0) {
      a.mode = LockMode::kSemaphore;
      a.limit = static_cast<std::uint32_t>(pick(8) == 0 ? pick(7) : 2);  // mismatches, 0, over max
    } else {
      a.mode = pick(3) == 0 ? LockMode::kShared : LockMode::kExclusive;
      if (pick(50) == 0) a.limit = 2;
    }
    a.wait = pick(5) < 3;
    if (a.wait && pick(3) == 0) a.wait_ms = pick(20) == 0 ? 600 : 50 + pick(400);
    if (!a.wait && pick(50) == 0) a.wait_ms = 10;
    if (pick(4) == 0) a.delay_ms = pick(20) == 0 ? 300 : 20 + pick(150);
    if (pick(4) == 0) a.lease_ms = pick(25) == 0 ? kMaxSessionTtlMs + 1 : 30 + pick(400);
    return a;
  }

  // EndLease (as the primary proposes it, also early or for a gone grant),
  // ExtendLease and Transfer, mostly aimed at a real holder.
  void lease_command(const StateMachine& sm, std::uint64_t which, Command& c) {
    const std::string lock = lock_name();
    auto info = sm.lock(lock);
    SessionId holder = session();
    Token token = 1 + pick(sm.revision() + 1);
    if (info && !info->holders.empty() && pick(6) != 0) {
      const HolderInfo& h = info->holders[pick(info->holders.size())];
      holder = h.session;
      token = pick(8) == 0 ? h.token + 1 : h.token;
    }
    if (which < 4) {
      c.body = EndLease{lock, holder, token};
    } else if (which < 7) {
      const std::uint64_t ms = pick(20) == 0 ? (pick(2) == 0 ? 0 : kMaxSessionTtlMs + 1) : 20 + pick(400);
      c.body = ExtendLease{lock, holder, token, ms};
      envelope(c, holder);
    } else {
      SessionId to = session();
      if (info && !info->waiters.empty() && pick(5) == 0) to = info->waiters[pick(info->waiters.size())].session;
      if (pick(20) == 0) to = holder;
      c.body = Transfer{lock, holder, token, to};
      envelope(c, holder);
    }
  }

  Release release(const StateMachine& sm) {
    Release r;
    r.lock = lock_name();
    auto info = sm.lock(r.lock);
    if (info && !info->holders.empty() && pick(8) != 0) {
      const HolderInfo& h = info->holders[pick(info->holders.size())];
      r.session = h.session;
      r.token = pick(8) == 0 ? h.token + pick(3) - 1 : h.token;
    } else {
      r.session = session();
      r.token = 1 + pick(sm.revision() + 1);
    }
    r.by_other = pick(4) == 0;  // a release by another connection (LockLost for the holder)
    return r;
  }

  Token holder_token(const StateMachine& sm, const std::string& lock) {
    auto info = sm.lock(lock);
    if (info && !info->holders.empty() && pick(6) != 0) return info->holders[pick(info->holders.size())].token;
    return pick(sm.revision() + 2);
  }

  std::pair<std::string, SessionId> waiter(const StateMachine& sm) {
    std::string lock = lock_name();
    auto info = sm.lock(lock);
    if (info && !info->waiters.empty() && pick(6) != 0) {
      return {lock, info->waiters[pick(info->waiters.size())].session};
    }
    return {lock, session()};
  }

  CommandBody malformed() {
    switch (pick(7)) {
      case 5: {  // a shard record: the first valid one gives session ids a shard; another id is refused
        static constexpr std::uint32_t kShards[] = {0, 2, 3, kMaxShardId + 1};
        const auto first = static_cast<slots::Slot>(pick(100));
        // Now and then backwards (refused).
        const auto last = static_cast<slots::Slot>(pick(5) == 0 ? pick(100) : 100 + pick(100));
        return SetOwnedSlots{{slots::SlotRange{first, last}}, kShards[pick(4)]};
      }
      case 0: return Acquire{"", session(), LockMode::kExclusive, 1, false, 0, 0};
      case 1: return Acquire{"a", session(), static_cast<LockMode>(3 + pick(200)), 1, true, 0, 0};
      case 2: return Acquire{"b", session(), LockMode::kSemaphore, 0, true, 0, 0};
      case 3: return OpenSession{pick(2) == 0 ? std::uint64_t{0} : std::uint64_t{10'000'000}, "x"};
      case 4: return Release{"", session(), 1};
      default: return FencePut{"f1", "v", "", 1};
    }
  }

  void envelope(Command& c, SessionId s) {
    if (s == 0 || pick(10) < 3) return;
    std::uint64_t& next = next_seq_[s];
    c.session = pick(40) == 0 ? s + 1 : s;  // a mismatched envelope now and then
    if (pick(30) == 0 && next > 6) {
      c.seq = next - 6;  // older than the window of 4 unless it is remembered
    } else {
      c.seq = ++next;
    }
  }

  std::mt19937_64 rng_;
  LogMillis now_ = 1'000;
  std::vector<SessionId> sessions_;
  std::map<SessionId, std::uint64_t> next_seq_;
  std::vector<Command> history_;
};

}  // namespace leasehold::core::testing
