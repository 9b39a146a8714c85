// tests/server/precise_timer_test.cc: server/net/precise_timer.h fires for every
// delay, including one already past. ctest runs it twice: plainly, and under
// libfaketime's rate mode (FAKETIME="+0 x1.005", as the torture suite's
// `rate:1.005` clock), which scales a relative timerfd value by 1/rate: a
// 1 ns delay became 0, which disarms a timerfd, and a node whose next timer
// was already due never ran a timer again (sessions outlived their TTL).
#include "server/net/precise_timer.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>

namespace leasehold::server {
namespace {

using namespace std::chrono_literals;

// Arms `delay` and runs the loop until the timer fires or 3 s pass (a guard
// uv_timer stops the loop). True if it fired.
bool fires(std::chrono::nanoseconds delay) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  bool fired = false;
  PreciseTimer timer;
  EXPECT_TRUE(timer.open(&loop, [&] {
    fired = true;
    uv_stop(&loop);
  }));
  uv_timer_t guard;
  uv_timer_init(&loop, &guard);
  guard.data = &loop;
  uv_timer_start(&guard, [](uv_timer_t* g) { uv_stop(static_cast<uv_loop_t*>(g->data)); }, 3000, 0);
  timer.arm(delay);
  uv_run(&loop, UV_RUN_DEFAULT);
  timer.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);  // runs the close callbacks
  EXPECT_EQ(uv_loop_close(&loop), 0);
  return fired;
}

TEST(PreciseTimer, ADeadlineAlreadyPastFiresAtOnce) {
  EXPECT_TRUE(fires(-5ms));
  EXPECT_TRUE(fires(0ns));
}

TEST(PreciseTimer, SubMicrosecondDelaysFire) {
  EXPECT_TRUE(fires(1ns));
  EXPECT_TRUE(fires(500ns));
}

TEST(PreciseTimer, AMillisecondDelayFiresAfterItAndNotBefore) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(fires(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 19ms);
}

}  // namespace
}  // namespace leasehold::server
