// The timer bookkeeping on its own.
#include "node/timers.h"

#include <gtest/gtest.h>

#include "node/node.h"

namespace leasehold::node {
namespace {

using std::chrono::milliseconds;

TEST(Timers, EarliestDeadlineAcrossKinds) {
  Timers t;
  const TimePoint now{};
  EXPECT_FALSE(t.next_deadline().has_value());
  t.start_session(1, 1000, now);
  t.add_wait("L", 2, now + milliseconds(300));
  t.add_wake(now + milliseconds(700));
  EXPECT_EQ(t.next_deadline(), now + milliseconds(300));
  auto due = t.take_due(now + milliseconds(700));
  EXPECT_TRUE(due.sessions.empty());
  ASSERT_EQ(due.waits.size(), 1u);
  EXPECT_EQ(due.waits[0], (std::pair<std::string, core::SessionId>{"L", 2}));
  EXPECT_TRUE(due.tick);
  EXPECT_EQ(t.next_deadline(), now + milliseconds(1000));
}

TEST(Timers, ExpiringSessionIsNotDueTwiceUntilRetried) {
  Timers t;
  const TimePoint now{};
  t.start_session(7, 100, now);
  auto due = t.take_due(now + milliseconds(100));
  ASSERT_EQ(due.sessions, std::vector<core::SessionId>{7});
  EXPECT_TRUE(t.take_due(now + milliseconds(10'000)).empty());
  EXPECT_EQ(t.keepalive(7, now).status().code(), ErrorCode::kSessionExpired);
  t.retry_session(7, now + milliseconds(200));
  EXPECT_EQ(t.take_due(now + milliseconds(200)).sessions, std::vector<core::SessionId>{7});
  t.end_session(7);
  EXPECT_EQ(t.session_count(), 0u);
}

TEST(Timers, SessionWithoutTtlNeverExpires) {
  Timers t;
  const TimePoint now{};
  t.start_session(3, 0, now);
  EXPECT_FALSE(t.next_deadline().has_value());
  EXPECT_EQ(*t.keepalive(3, now + milliseconds(1'000'000)), kNeverExpires);
  EXPECT_EQ(*t.remaining_ms(3, now), kNeverExpires);
}

TEST(Timers, RemovedWaitIsNotDue) {
  Timers t;
  const TimePoint now{};
  t.add_wait("L", 2, now + milliseconds(5));
  t.add_wait("L", 2, now + milliseconds(50));  // replaces
  t.remove_wait("L", 2);
  EXPECT_TRUE(t.take_due(now + milliseconds(100)).empty());
}

TEST(Timers, LeaseEndsAreDueOncePerGrantAndALaterOneReplaces) {
  Timers t;
  const TimePoint now{};
  t.add_lease("L", 2, 40, now + milliseconds(100));
  t.add_lease("L", 2, 40, now + milliseconds(300));  // LOCK.EXTEND: replaces
  t.add_lease("M", 3, 41, now + milliseconds(200));
  EXPECT_EQ(t.lease_count(), 2U);
  EXPECT_EQ(t.next_deadline(), now + milliseconds(200));
  EXPECT_TRUE(t.take_due(now + milliseconds(150)).empty());
  auto due = t.take_due(now + milliseconds(300));
  ASSERT_EQ(due.leases.size(), 2U);
  EXPECT_EQ(due.leases[0].lock, "M");
  EXPECT_EQ(due.leases[1].lock, "L");
  EXPECT_EQ(due.leases[1].session, 2U);
  EXPECT_EQ(due.leases[1].token, 40U);
  EXPECT_EQ(t.lease_count(), 0U);
  t.add_lease("L", 2, 50, now + milliseconds(400));
  t.remove_lease("L", 2);  // the grant ended otherwise (LockLost)
  EXPECT_TRUE(t.take_due(now + milliseconds(1000)).empty());
}

}  // namespace
}  // namespace leasehold::node
