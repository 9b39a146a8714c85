// tests/node/node_test_util.h: driving a Node in tests.
//
// TestExecutor: the node's loop is the test thread; tasks posted (by the log
//   thread) are run when the test drains the queue.
// ControlledLog: wraps the REAL RocksDB log; counts appends, can hold appends
//   back (to have proposals arrive while one is in flight) and can inject an
//   I/O error into the next append (disk fault).
// NodeHarness: temp dir + manual clock + executor + node, reopenable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/command.h"
#include "node/node.h"
#include "testkit/temp_dir.h"

namespace leasehold::node::testing {

class TestExecutor {
 public:
  Executor executor();
  // Runs posted tasks until pred() holds or scaled(timeout) passes
  // (testkit/eventually.h); returns pred().
  bool run_until(const std::function<bool()>& pred,
                 std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Runs posted tasks for `duration` (to show something does NOT happen).
  void run_for(std::chrono::milliseconds duration);

 private:
  bool run_one(std::chrono::milliseconds wait);
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
};

struct LogControl {
  std::mutex mu;
  bool hold = false;
  std::vector<std::function<void()>> held;  // appends not yet passed on
  int appends = 0;                          // append() calls seen
  std::optional<Status> fail_next;          // injected result of the next append
  bool hold_snapshots = false;              // save_snapshot() calls are held too
  std::vector<std::function<void()>> held_snapshots;
  // Stops/starts passing appends to the real log; release() passes held ones on.
  void set_hold(bool on);
  void release();
  // Stops/starts passing snapshot saves on; release_snapshots() passes held ones on.
  void set_hold_snapshots(bool on);
  void release_snapshots();
  std::size_t held_snapshot_count();
  int append_count();
  std::size_t held_count();
};

std::unique_ptr<log::Log> controlled(std::unique_ptr<log::Log> inner, std::shared_ptr<LogControl> control);

// A session open, as a command to hand to Node::propose.
core::Command open_session_command(std::uint64_t ttl_ms = 10'000, const std::string& owner = "t");

class NodeHarness {
 public:
  explicit NodeHarness(NodeOptions options = {});
  ~NodeHarness();
  // Opens (or reopens, after shutdown) the node on the same directory.
  void open();
  // Shuts down, waits, destroys the node (the directory stays).
  void close();

  // Proposes and runs the loop until the reply arrives.
  core::ApplyResult commit(core::CommandBody body, core::SessionId session = 0, std::uint64_t seq = 0);
  core::SessionId open_session(std::uint64_t ttl_ms, const std::string& owner = "t");
  // Runs the node's due timers, then the loop until no proposal is pending
  // (what the timers proposed is applied); a test failure if that never ends.
  void fire_due_timers();

  Node& node() { return *node_; }
  ManualClock& clock() { return clock_; }
  TestExecutor& loop() { return loop_; }
  LogControl& control() { return *control_; }
  std::vector<core::Effect>& effects() { return effects_; }
  const std::string& dir() const { return dir_.path(); }
  NodeOptions& options() { return options_; }

 private:
  leasehold::testing::TempDir dir_{"node"};
  NodeOptions options_;
  ManualClock clock_;
  TestExecutor loop_;  // outlives the node and its log
  std::shared_ptr<LogControl> control_ = std::make_shared<LogControl>();
  std::vector<core::Effect> effects_;
  std::unique_ptr<Node> node_;
};

template <typename E>
std::vector<E> effects_of(const std::vector<core::Effect>& effects) {
  std::vector<E> out;
  for (const auto& e : effects) {
    if (const E* p = std::get_if<E>(&e)) out.push_back(*p);
  }
  return out;
}

}  // namespace leasehold::node::testing
