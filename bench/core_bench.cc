// bench/core_bench.cc: throughput and memory of the core lock state machine.
//
//   apply() throughput, uncontended acquire+release (items/s = commands/s),
//   with and without idempotence keys, over 1 or 10k lock names;
//   a contended lock with 100 and 10k queued sessions (release -> grant rounds);
//   memory per idle session, per held lock and per waiter (mallinfo2 deltas
//   over 100k objects, reported as counters);
//   snapshot + restore, and the longest pause of a snapshot in steps.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/state_machine.h"

namespace leasehold::core {
namespace {

Command cmd(CommandBody body, SessionId session = 0, std::uint64_t seq = 0) {
  Command c;
  c.now = 1'000;
  c.session = session;
  c.seq = seq;
  c.body = std::move(body);
  return c;
}

SessionId open(StateMachine& sm) {
  return sm.apply(cmd(OpenSession{60'000, "bench"})).reply.session;
}

Acquire acquire(std::string lock, SessionId s, bool wait = false) {
  Acquire a;
  a.lock = std::move(lock);
  a.session = s;
  a.wait = wait;
  return a;
}

void BM_UncontendedAcquireRelease(benchmark::State& state) {
  const bool idempotent = state.range(0) != 0;
  const auto names = static_cast<std::size_t>(state.range(1));
  StateMachine sm;
  const SessionId s = open(sm);
  std::vector<Command> acquires, releases;
  for (std::size_t i = 0; i < names; ++i) {
    const std::string name = "lock/" + std::to_string(i);
    acquires.push_back(cmd(acquire(name, s), idempotent ? s : 0));
    releases.push_back(cmd(Release{name, s, 0}, idempotent ? s : 0));
  }
  std::uint64_t seq = 0;
  std::size_t i = 0;
  for (auto _ : state) {
    Command& a = acquires[i];
    Command& r = releases[i];
    if (idempotent) a.seq = ++seq;
    ApplyResult got = sm.apply(a);
    std::get<Release>(r.body).token = got.reply.token;
    if (idempotent) r.seq = ++seq;
    ApplyResult rel = sm.apply(r);
    if (got.reply.is_error() || rel.reply.is_error()) state.SkipWithError("unexpected error");
    benchmark::DoNotOptimize(rel);
    if (++i == names) i = 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2);
  state.counters["commands/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_UncontendedAcquireRelease)
    ->ArgNames({"idempotent", "locks"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({1, 10'000});

// N+1 sessions on one lock: one holds, N wait. Each round the holder
// releases (granting the head waiter) and queues again at the tail. With
// N = 10k a grant must not cost O(N) (core/fifo_queue.h).
void BM_ContendedWaiters(benchmark::State& state) {
  const auto waiters = static_cast<int>(state.range(0));
  StateMachine sm;
  std::vector<SessionId> sessions;
  for (int i = 0; i <= waiters; ++i) sessions.push_back(open(sm));
  Token token = sm.apply(cmd(acquire("hot", sessions[0]))).reply.token;
  for (int i = 1; i <= waiters; ++i) sm.apply(cmd(acquire("hot", sessions[static_cast<std::size_t>(i)], true)));
  std::size_t holder = 0;
  Command release = cmd(Release{"hot", 0, 0});
  Command requeue = cmd(acquire("hot", 0, true));
  for (auto _ : state) {
    auto& rel = std::get<Release>(release.body);
    rel.session = sessions[holder];
    rel.token = token;
    ApplyResult r = sm.apply(release);
    const auto* granted = r.effects.empty() ? nullptr : std::get_if<Granted>(&r.effects.front());
    if (r.reply.is_error() || granted == nullptr) {
      state.SkipWithError("release did not grant");
      break;
    }
    token = granted->token;
    std::get<Acquire>(requeue.body).session = sessions[holder];
    benchmark::DoNotOptimize(sm.apply(requeue));
    holder = (holder + 1) % sessions.size();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2);
  state.counters["grants/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ContendedWaiters)->ArgName("waiters")->Arg(100)->Arg(10'000);

std::size_t heap_in_use() { return mallinfo2().uordblks; }

constexpr int kObjects = 100'000;

Limits roomy() {
  Limits l;
  l.max_waiters_per_lock = 2 * kObjects;
  return l;
}

void BM_MemoryPerIdleSession(benchmark::State& state) {
  double per = 0;
  for (auto _ : state) {
    StateMachine sm(roomy());
    const std::size_t before = heap_in_use();
    for (int i = 0; i < kObjects; ++i) open(sm);
    per = static_cast<double>(heap_in_use() - before) / kObjects;
  }
  state.counters["bytes/session"] = per;
}
BENCHMARK(BM_MemoryPerIdleSession)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_MemoryPerHeldLock(benchmark::State& state) {
  double per = 0;
  for (auto _ : state) {
    StateMachine sm(roomy());
    std::vector<SessionId> sessions;
    for (int i = 0; i < kObjects; ++i) sessions.push_back(open(sm));
    const std::size_t before = heap_in_use();
    for (int i = 0; i < kObjects; ++i) {
      sm.apply(cmd(acquire("jobs/" + std::to_string(i), sessions[static_cast<std::size_t>(i)])));
    }
    per = static_cast<double>(heap_in_use() - before) / kObjects;
  }
  state.counters["bytes/held_lock"] = per;
}
BENCHMARK(BM_MemoryPerHeldLock)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_MemoryPerWaiter(benchmark::State& state) {
  double per = 0;
  for (auto _ : state) {
    StateMachine sm(roomy());
    std::vector<SessionId> sessions;
    for (int i = 0; i < kObjects; ++i) sessions.push_back(open(sm));
    sm.apply(cmd(acquire("hot", open(sm))));
    const std::size_t before = heap_in_use();
    for (int i = 0; i < kObjects; ++i) {
      sm.apply(cmd(acquire("hot", sessions[static_cast<std::size_t>(i)], true)));
    }
    per = static_cast<double>(heap_in_use() - before) / kObjects;
  }
  state.counters["bytes/waiter"] = per;
}
BENCHMARK(BM_MemoryPerWaiter)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_SnapshotRestore(benchmark::State& state) {
  StateMachine sm;
  for (int i = 0; i < 10'000; ++i) {
    const SessionId s = open(sm);
    sm.apply(cmd(acquire("lock/" + std::to_string(i), s)));
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string snap = sm.snapshot();
    bytes = snap.size();
    Result<StateMachine> back = StateMachine::restore(snap);
    if (!back.is_ok()) state.SkipWithError("restore failed");
  }
  state.counters["snapshot_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_SnapshotRestore)->Unit(benchmark::kMillisecond);

// The owner's longest pause for one snapshot of N idle sessions: the whole
// image in one call (snapshot()) against the image in steps of 10,000
// sessions (begin_snapshot + snapshot_step; the node's default). Counters:
// whole_ms, and for the steps begin_ms, longest_step_ms and steps; the
// iteration time is the whole stepped image (join included).
void BM_SnapshotLongestPause(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  Limits limits;
  limits.max_sessions = static_cast<std::size_t>(state.range(0));
  StateMachine sm(limits);
  for (std::int64_t i = 0; i < state.range(0); ++i) open(sm);
  if (sm.session_count() != static_cast<std::size_t>(state.range(0))) state.SkipWithError("sessions refused");
  const Clock::time_point whole_start = Clock::now();
  const std::size_t whole_bytes = sm.snapshot().size();
  const double whole_ms = ms(Clock::now() - whole_start);
  double begin_ms = 0, longest_step_ms = 0, steps = 0;
  for (auto _ : state) {
    Clock::time_point t = Clock::now();
    sm.begin_snapshot();
    begin_ms = ms(Clock::now() - t);
    longest_step_ms = 0;
    steps = 0;
    bool done = false;
    while (!done) {
      t = Clock::now();
      done = sm.snapshot_step(10'000);
      longest_step_ms = std::max(longest_step_ms, ms(Clock::now() - t));
      ++steps;
    }
    const std::string image = StateMachine::join_snapshot(sm.finish_snapshot());
    if (image.size() != whole_bytes) state.SkipWithError("stepped image differs in size");
  }
  state.counters["whole_ms"] = whole_ms;
  state.counters["begin_ms"] = begin_ms;
  state.counters["longest_step_ms"] = longest_step_ms;
  state.counters["steps"] = steps;
}
// The longest single apply() while opening N sessions: a hash table that
// grows rehashes (relinks) every node in one call. Counters: longest_ms,
// and the session count at which it happened.
void BM_OpenLongestApply(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    StateMachine sm;
    double longest_ms = 0, at = 0;
    for (std::int64_t i = 0; i < state.range(0); ++i) {
      const Clock::time_point t = Clock::now();
      open(sm);
      const double took = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      if (took > longest_ms) {
        longest_ms = took;
        at = static_cast<double>(i);
      }
    }
    state.counters["longest_ms"] = longest_ms;
    state.counters["at_sessions"] = at;
  }
}
BENCHMARK(BM_OpenLongestApply)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_SnapshotLongestPause)->Arg(1'000'000)->Arg(10'000'000)->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace leasehold::core

BENCHMARK_MAIN();
