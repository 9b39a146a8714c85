// Property and differential tests: long seeded random command streams
// (random_commands.h) applied to the StateMachine and, side by side, to the
// simple ReferenceModel. After every step the invariants below are checked;
// replies and effects must match the model. Replay a failure with
// LEASEHOLD_SEED=<seed> (printed on failure).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>

#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/command_codec.h"
#include "random_commands.h"
#include "reference_model.h"

namespace leasehold::core::testing {
namespace {

#ifdef LEASEHOLD_SANITIZED
constexpr int kSteps = 100'000;
constexpr int kFullCheckEvery = 4;  // snapshot-equality-on-error check cadence
#else
constexpr int kSteps = 100'000;
constexpr int kFullCheckEvery = 1;
#endif
constexpr int kRestoreEvery = 1'000;

std::string describe(const Command& c) {
  static constexpr const char* kNames[] = {"OpenSession", "CloseSession", "ExpireSession", "KillSession",
                                           "SetSessionTtl", "Acquire", "Release", "CancelWait",
                                           "TimeoutWait", "Revoke", "Tick", "FencePut", "CompatSet",
                                           "CompatDelete", "Reopen", "EndLease", "ExtendLease", "Transfer",
                                           "ConnectionClosed", "SetOwnedSlots"};
  // One name per alternative of the command variant, in its order.
  static_assert(std::size(kNames) == std::variant_size_v<leasehold::core::CommandBody>);
  return std::string(kNames[c.body.index()]) + " now=" + std::to_string(c.now) +
         " session=" + std::to_string(c.session) + " seq=" + std::to_string(c.seq);
}

void expect_same_reply(const Reply& real, const Reply& model) {
  EXPECT_EQ(real.code, model.code) << real.error.to_string();
  EXPECT_EQ(real.error.code(), model.error.code()) << real.error.to_string();
  EXPECT_EQ(real.token, model.token);
  EXPECT_EQ(real.session, model.session);
  EXPECT_EQ(real.count, model.count);
  EXPECT_EQ(real.value, model.value);
}

void check_lock_shapes(const StateMachine& sm, const std::vector<LockInfo>& locks) {
  const Limits& lim = sm.limits();
  std::set<std::pair<std::string, SessionId>> seen;
  for (const LockInfo& l : locks) {
    ASSERT_LE(l.holders.size(), lim.max_holders_per_lock) << l.name;
    ASSERT_LE(l.waiters.size(), lim.max_waiters_per_lock) << l.name;
    ASSERT_TRUE(!l.holders.empty() || !l.waiters.empty() || l.delay_until > sm.last_now()) << l.name;
    std::size_t exclusive = 0, shared = 0;
    for (const HolderInfo& h : l.holders) {
      exclusive += h.mode == LockMode::kExclusive ? 1 : 0;
      shared += h.mode == LockMode::kShared ? 1 : 0;
      ASSERT_LE(h.token, l.last_token);
      ASSERT_TRUE(sm.session(h.session)) << "ended session " << h.session << " holds " << l.name;
      ASSERT_TRUE(seen.emplace(l.name, h.session).second);
    }
    for (const WaiterInfo& w : l.waiters) {
      ASSERT_TRUE(sm.session(w.session)) << "ended session " << w.session << " waits on " << l.name;
      ASSERT_TRUE(seen.emplace(l.name, w.session).second);
    }
    ASSERT_LE(exclusive, 1U) << l.name;
    ASSERT_FALSE(exclusive == 1 && shared > 0) << l.name;
    if (l.mode == LockMode::kSemaphore) {
      ASSERT_LE(l.holders.size(), l.limit) << l.name;
      ASSERT_EQ(exclusive + shared, 0U) << l.name;
    }
  }
}

// Grants happen in FIFO order: the granted sessions are taken from the queue
// as it was before the step (plus the step's own queued Acquire) in order,
// and nobody still queued after the step stood ahead of a granted session.
void check_fifo(const std::map<std::string, std::vector<SessionId>>& queues_before, const Command& c,
                const ApplyResult& r, const StateMachine& sm) {
  std::map<std::string, std::vector<SessionId>> granted;
  const auto* transfer = std::get_if<Transfer>(&c.body);
  for (const Effect& e : r.effects) {
    const auto* g = std::get_if<Granted>(&e);
    if (g == nullptr) continue;
    // A transfer's grant goes to a session that was not queued (checked below).
    if (transfer != nullptr && g->lock == transfer->lock && g->session == transfer->to) continue;
    granted[g->lock].push_back(g->session);
  }
  if (transfer != nullptr && !r.reply.is_error() && r.reply.token != 0) {
    // The waiters keep their places: the queue is what it was, less those a
    // lock-delay ending in this same command granted.
    const auto& woke = granted[transfer->lock];
    std::vector<SessionId> want;
    if (const auto it = queues_before.find(transfer->lock); it != queues_before.end()) {
      for (SessionId id : it->second) {
        if (std::find(woke.begin(), woke.end(), id) == woke.end()) want.push_back(id);
      }
    }
    std::vector<SessionId> after;
    if (auto info = sm.lock(transfer->lock)) {
      for (const WaiterInfo& w : info->waiters) after.push_back(w.session);
    }
    ASSERT_EQ(after, want) << "a transfer moved the queue of " << transfer->lock;
  }
  for (const auto& [lock, sessions] : granted) {
    std::vector<SessionId> queue;
    if (auto it = queues_before.find(lock); it != queues_before.end()) queue = it->second;
    if (const auto* a = std::get_if<Acquire>(&c.body); a != nullptr && a->lock == lock) {
      queue.push_back(a->session);
    }
    std::set<SessionId> still_waiting;
    if (auto info = sm.lock(lock)) {
      for (const WaiterInfo& w : info->waiters) still_waiting.insert(w.session);
    }
    std::size_t pos = 0;
    for (SessionId s : sessions) {
      while (pos < queue.size() && queue[pos] != s) {
        ASSERT_EQ(still_waiting.count(queue[pos]), 0U) << "session " << s << " overtook " << queue[pos]
                                                       << " on " << lock;
        ++pos;
      }
      ASSERT_LT(pos, queue.size()) << "granted session " << s << " was not queued on " << lock;
      ++pos;
      ASSERT_TRUE(sm.session(s)) << "granted to ended session " << s;
    }
  }
}

// Per lock, every grant's token is above every token granted in earlier steps.
void check_token_order(const ApplyResult& r, const Command& c, std::map<std::string, Token>& last) {
  std::map<std::string, Token> now;
  const auto grant = [&](const std::string& lock, Token t) {
    const auto it = last.find(lock);
    ASSERT_TRUE(it == last.end() || t > it->second) << "token " << t << " not above " << it->second
                                                    << " on " << lock;
    now[lock] = std::max(now[lock], t);
  };
  for (const Effect& e : r.effects) {
    if (const auto* g = std::get_if<Granted>(&e)) {
      ASSERT_NO_FATAL_FAILURE(grant(g->lock, g->token));
    }
  }
  const auto* a = std::get_if<Acquire>(&c.body);
  if (a != nullptr && r.reply.code == ReplyCode::kOk) {
    ASSERT_NO_FATAL_FAILURE(grant(a->lock, r.reply.token));
  }
  for (const auto& [lock, t] : now) last[lock] = t;
}

void check_tokens(const ApplyResult& r, const Command& c, const StateMachine& sm, Revision before) {
  if (r.reply.is_error()) {
    ASSERT_TRUE(r.effects.empty());
    ASSERT_EQ(sm.revision(), before);
    return;
  }
  const bool fresh = sm.revision() == before + 1;  // applied now (a cached retry leaves it)
  if (!fresh) {
    ASSERT_EQ(sm.revision(), before);
    ASSERT_TRUE(r.effects.empty());
    return;
  }
  for (const Effect& e : r.effects) {
    if (const auto* g = std::get_if<Granted>(&e)) {
      ASSERT_EQ(g->token, sm.revision());
    }
  }
  if (std::holds_alternative<Acquire>(c.body) && r.reply.code == ReplyCode::kOk) {
    ASSERT_EQ(r.reply.token, sm.revision());
  }
}

// StateMachine::waiter_count() is a counter kept by every path that queues or
// ends a wait; it must equal the count taken the slow way, over the sessions.
void check_waiter_count(const StateMachine& sm) {
  std::size_t slow = 0;
  for (const SessionInfo& s : sm.sessions()) slow += s.waiting;
  ASSERT_EQ(sm.waiter_count(), slow);
}

// StateMachine::lock_stats() (one pass, for metrics) agrees with the same
// numbers taken from the full lock listing.
void check_lock_stats(const StateMachine& sm, const std::vector<LockInfo>& locks) {
  const LogMillis now = sm.last_now() + 20;
  const LogMillis long_hold = 30;
  LockStats want;
  for (const LockInfo& l : locks) {
    want.longest_queue = std::max(want.longest_queue, l.waiters.size());
    want.last_token = std::max(want.last_token, l.last_token);
    for (const HolderInfo& h : l.holders) {
      const LogMillis age = now > h.acquired_at ? now - h.acquired_at : 0;
      want.oldest_hold_ms = std::max(want.oldest_hold_ms, age);
      want.long_holds += age > long_hold ? 1 : 0;
    }
  }
  const LockStats got = sm.lock_stats(now, long_hold);
  ASSERT_EQ(got.longest_queue, want.longest_queue);
  ASSERT_EQ(got.last_token, want.last_token);
  ASSERT_EQ(got.oldest_hold_ms, want.oldest_hold_ms);
  ASSERT_EQ(got.long_holds, want.long_holds);
}

class CoreProperty : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(CoreProperty, RandomStreamsKeepInvariantsAndMatchReference) {
  const std::uint64_t seed = seed_from_env(GetParam());
  SCOPED_TRACE("replay with LEASEHOLD_SEED=" + std::to_string(seed));
  StateMachine sm(small_limits());
  ReferenceModel model(small_limits());
  RandomCommands gen(seed);
  std::map<std::string, std::size_t> stats;
  std::map<std::string, Token> last_tokens;
  for (int step = 0; step < kSteps; ++step) {
    gen.prune(sm);
    const Command c = gen.next(sm);
    SCOPED_TRACE("step " + std::to_string(step) + ": " + describe(c));
    std::map<std::string, std::vector<SessionId>> queues;
    for (const LockInfo& l : sm.locks("", 1'000)) {
      for (const WaiterInfo& w : l.waiters) queues[l.name].push_back(w.session);
    }
    const bool full = step % kFullCheckEvery == 0;
    const std::string before_bytes = full ? sm.snapshot() : std::string();
    const Revision before = sm.revision();

    const ApplyResult r = sm.apply(c);
    const ApplyResult m = model.apply(c);
    gen.observe(c, r);

    expect_same_reply(r.reply, m.reply);
    EXPECT_EQ(r.effects, m.effects);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "diverged from the reference model";
    ASSERT_NO_FATAL_FAILURE(check_tokens(r, c, sm, before));
    if (sm.revision() != before) {
      ASSERT_NO_FATAL_FAILURE(check_token_order(r, c, last_tokens));
    }
    if (full && c.seq == 0 && sm.revision() == before) {
      // an error with no idempotence key changes nothing at all
      ASSERT_EQ(sm.snapshot(), before_bytes);
    }
    const std::vector<LockInfo> locks = sm.locks("", 1'000);
    ASSERT_NO_FATAL_FAILURE(check_lock_shapes(sm, locks));
    ASSERT_NO_FATAL_FAILURE(check_fifo(queues, c, r, sm));
    ASSERT_NO_FATAL_FAILURE(check_waiter_count(sm));
    ASSERT_EQ(locks.size(), sm.lock_count());  // the listing below 1,000 is complete
    ASSERT_NO_FATAL_FAILURE(check_lock_stats(sm, locks));
    if (step % kRestoreEvery == 0 || step == kSteps - 1) {
      const std::string snap = sm.snapshot();
      Result<StateMachine> back = StateMachine::restore(snap, small_limits());
      ASSERT_TRUE(back.is_ok()) << back.status().to_string();
      ASSERT_EQ(back->snapshot(), snap);
      ASSERT_EQ(back->waiter_count(), sm.waiter_count());
    }
    stats[r.reply.is_error() ? std::string(error_code_name(r.reply.error.code()))
                             : (r.reply.code == ReplyCode::kQueued ? "queued" : "ok")]++;
    for (const Effect& e : r.effects) {
      stats["effect" + std::to_string(e.index())]++;
      if (const auto* l = std::get_if<LockLost>(&e)) {
        if (l->reason == LossReason::kLeaseEnded) stats["lease_ended"]++;
        if (l->reason == LossReason::kTransferred) stats["transferred"]++;
      }
    }
  }
  // The stream must have exercised the interesting paths.
  for (const char* key : {"ok", "queued", "would_block", "conflict", "limit_exceeded", "stale_token",
                          "not_holder", "invalid_argument", "session_expired", "not_found",
                          "effect0", "effect1", "effect2", "effect3", "effect6", "effect7", "effect8",
                          "lease_ended", "transferred"}) {
    EXPECT_GT(stats[key], 0U) << key;
  }
  for (const auto& [k, v] : stats) RecordProperty(k, static_cast<int>(v));
}

INSTANTIATE_TEST_SUITE_P(Seeds, CoreProperty, ::testing::Values(1, 2, 3, 4, 5));

}  // namespace
}  // namespace leasehold::core::testing
