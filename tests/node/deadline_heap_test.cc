// DeadlineHeap against a std::set of (deadline, id) under seeded random
// operations, and Timers::arm_sessions against single start_session calls.
// Replay a failure with LEASEHOLD_SEED=<seed> (printed on failure).
#include "node/deadline_heap.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "node/timers.h"

namespace leasehold::node {
namespace {

using std::chrono::milliseconds;

std::uint64_t seed_from_env(std::uint64_t fallback) {
  const char* s = std::getenv("LEASEHOLD_SEED");
  return s == nullptr ? fallback : std::strtoull(s, nullptr, 10);
}

class DeadlineHeapRandom : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(DeadlineHeapRandom, MatchesAnOrderedSet) {
  const std::uint64_t seed = seed_from_env(GetParam());
  SCOPED_TRACE("replay with LEASEHOLD_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto pick = [&rng](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
  constexpr core::SessionId kIds = 300;
  // std::map: slots at stable addresses, like Timers' session records.
  std::map<core::SessionId, std::uint32_t> slots;
  for (core::SessionId id = 1; id <= kIds; ++id) slots[id] = DeadlineHeap::kAbsent;
  std::map<core::SessionId, TimePoint> in;  // the model: id -> deadline
  std::set<std::pair<TimePoint, core::SessionId>> order;
  DeadlineHeap heap;
  const auto deadline = [&pick] { return TimePoint{} + milliseconds(pick(50)); };  // many ties
  // Bulk start: appended unordered, one build.
  for (core::SessionId id = 1; id <= kIds / 2; ++id) {
    const TimePoint at = deadline();
    heap.append(at, id, &slots[id]);
    in[id] = at;
    order.emplace(at, id);
  }
  heap.build();
  for (int step = 0; step < 20'000; ++step) {
    const core::SessionId id = 1 + pick(kIds);
    std::uint32_t& slot = slots[id];
    const auto it = in.find(id);
    switch (pick(4)) {
      case 0:  // push or move
        if (it == in.end()) {
          const TimePoint at = deadline();
          heap.push(at, id, &slot);
          in[id] = at;
          order.emplace(at, id);
        } else {
          const TimePoint at = deadline();
          order.erase({it->second, id});
          heap.update(slot, at);
          it->second = at;
          order.emplace(at, id);
        }
        break;
      case 1:  // erase
        if (it != in.end()) {
          heap.erase(slot);
          order.erase({it->second, id});
          in.erase(it);
        }
        break;
      case 2:  // pop
        if (!order.empty()) {
          const DeadlineHeap::Entry e = heap.pop();
          ASSERT_EQ(e.at, order.begin()->first);
          ASSERT_EQ(e.id, order.begin()->second);
          ASSERT_EQ(*e.slot, DeadlineHeap::kAbsent);
          in.erase(e.id);
          order.erase(order.begin());
        }
        break;
      default:  // check the top and every slot
        ASSERT_EQ(heap.size(), order.size());
        if (!order.empty()) {
          ASSERT_EQ(heap.top().at, order.begin()->first);
          ASSERT_EQ(heap.top().id, order.begin()->second);
        }
        for (const auto& [sid, s] : slots) {
          const auto found = in.find(sid);
          if (found == in.end()) {
            ASSERT_EQ(s, DeadlineHeap::kAbsent) << sid;
          } else {
            ASSERT_NE(s, DeadlineHeap::kAbsent) << sid;
            ASSERT_EQ(heap.at(s), found->second) << sid;
          }
        }
        break;
    }
  }
  // Draining gives the set's order: deadline, then id.
  while (!order.empty()) {
    const DeadlineHeap::Entry e = heap.pop();
    ASSERT_EQ(std::make_pair(e.at, e.id), *order.begin());
    order.erase(order.begin());
  }
  EXPECT_TRUE(heap.empty());
}

INSTANTIATE_TEST_SUITE_P(Seeds, DeadlineHeapRandom, ::testing::Values(1, 2, 3));

// Everything a Timers user can observe about sessions, at `now`.
struct SessionView {
  std::vector<std::pair<core::SessionId, std::uint64_t>> remaining;  // ms, or kNeverExpires
  std::vector<core::SessionId> due;
  bool operator==(const SessionView&) const = default;
};

SessionView view(Timers& t, const std::vector<core::SessionId>& ids, TimePoint now) {
  SessionView v;
  for (core::SessionId id : ids) {
    auto r = t.remaining_ms(id, now);
    v.remaining.emplace_back(id, r ? *r : 0);
  }
  v.due = t.take_due(now).sessions;
  return v;
}

TEST(Timers, ArmSessionsInBulkEqualsStartingEach) {
  const TimePoint start{};
  std::vector<std::pair<core::SessionId, std::uint64_t>> sessions;
  std::vector<core::SessionId> ids;
  for (core::SessionId id = 1; id <= 200; ++id) {
    sessions.emplace_back(id * 7 % 211, id % 5 == 0 ? 0 : 100 + (id % 4) * 100);  // shuffled ids, ties, ttl 0
    ids.push_back(id * 7 % 211);
  }
  Timers bulk, single;
  // Some sessions exist already, one of them expiring: arming restarts them.
  for (Timers* t : {&bulk, &single}) {
    t->start_session(7, 50, start);
    t->start_session(14, 1000, start);
    ASSERT_EQ(t->take_due(start + milliseconds(50)).sessions, std::vector<core::SessionId>{7});
  }
  const TimePoint now = start + milliseconds(60);
  bulk.arm_sessions(sessions, now);
  for (const auto& [id, ttl] : sessions) single.start_session(id, ttl, now);
  ASSERT_EQ(bulk.session_count(), single.session_count());
  ASSERT_EQ(bulk.next_deadline(), single.next_deadline());
  for (int ms : {60, 159, 160, 161, 260, 360, 460, 1000, 5000}) {
    const TimePoint at = start + milliseconds(ms);
    EXPECT_EQ(view(bulk, ids, at), view(single, ids, at)) << "at " << ms << " ms";
  }
  // Keepalives and ends still work on bulk-armed sessions.
  EXPECT_EQ(bulk.take_due(start + milliseconds(100'000)).sessions.size(), 0U);
  bulk.end_session(ids[0]);
  EXPECT_EQ(bulk.session_count(), single.session_count() - 1);
}

TEST(Timers, KeepaliveMovesABulkArmedDeadline) {
  Timers t;
  const TimePoint now{};
  t.arm_sessions({{1, 100}, {2, 100}, {3, 300}}, now);
  ASSERT_EQ(*t.keepalive(1, now + milliseconds(90)), 100U);  // 1 now due at 190
  EXPECT_EQ(t.take_due(now + milliseconds(100)).sessions, std::vector<core::SessionId>{2});
  EXPECT_EQ(*t.remaining_ms(1, now + milliseconds(100)), 90U);
  EXPECT_EQ(t.take_due(now + milliseconds(190)).sessions, std::vector<core::SessionId>{1});
  EXPECT_EQ(t.next_deadline(), now + milliseconds(300));
}

}  // namespace
}  // namespace leasehold::node
