// node/clock.h: the monotonic clock and the executor the node is given.
//
// The node never reads a clock or starts a thread itself: time comes from a
// Clock, and work that must run on the loop thread is handed to an Executor.
// Production uses SteadyClock and an eventfd-woken executor (server/net/loop_executor.h); tests
// use ManualClock and a queue they drain.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

namespace leasehold::node {

using TimePoint = std::chrono::steady_clock::time_point;

// A monotonic clock. now() never decreases. Implementations must be safe to
// call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// A clock that moves only when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{} + std::chrono::hours(1)) : now_(start) {}
  TimePoint now() const override { return now_.load(); }
  void advance(std::chrono::milliseconds by) { now_.store(now_.load() + by); }

 private:
  std::atomic<TimePoint> now_;
};

// Runs a task on the node's (loop) thread, later, in the order posted.
// Must be callable from any thread, and must stay callable until the Node and
// its Log are destroyed. Tasks posted after the loop stopped may be dropped.
using Executor = std::function<void(std::function<void()>)>;

}  // namespace leasehold::node
