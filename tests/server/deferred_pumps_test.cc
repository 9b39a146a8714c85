// The deferred pumps' order (server/net/deferred_pumps.h): within a pass,
// connections whose blocking request was just answered are pumped before
// the others, each list in the order it was added; what a pump adds runs in
// a later pass of the same run(); a connection gone by then is skipped.
#include "server/net/deferred_pumps.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace leasehold::server {
namespace {

// Records its pump in `log`; `then` runs inside the pump (to add more).
struct Recorder {
  std::string name;
  std::vector<std::string>* log;
  std::function<void()> then;
  void run_deferred_pump() {
    log->push_back(name);
    if (then) then();
  }
};

class DeferredPumpsTest : public ::testing::Test {
 protected:
  std::shared_ptr<Recorder> make(const std::string& name) {
    auto r = std::make_shared<Recorder>();
    r->name = name;
    r->log = &log_;
    return r;
  }
  DeferredPumpsOf<Recorder> pumps_;
  std::vector<std::string> log_;
};

TEST_F(DeferredPumpsTest, WaitedConnectionsGoFirstThenTheRestEachInAddedOrder) {
  auto releaser = make("releaser"), other = make("other"), grantee = make("grantee"), second = make("second");
  pumps_.add(releaser, false);
  pumps_.add(grantee, true);
  pumps_.add(other, false);
  pumps_.add(second, true);
  EXPECT_FALSE(pumps_.empty());
  pumps_.run();
  EXPECT_EQ(log_, (std::vector<std::string>{"grantee", "second", "releaser", "other"}));
  EXPECT_TRUE(pumps_.empty());
}

TEST_F(DeferredPumpsTest, WhatAPumpAddsRunsInALaterPassOfTheSameRun) {
  auto late_waited = make("late-waited"), late = make("late"), a = make("a"), b = make("b");
  a->then = [&] { pumps_.add(late, false); };
  b->then = [&] { pumps_.add(late_waited, true); };
  pumps_.add(a, false);
  pumps_.add(b, false);
  pumps_.run();
  // The second pass: its waited connection first again.
  EXPECT_EQ(log_, (std::vector<std::string>{"a", "b", "late-waited", "late"}));
  EXPECT_TRUE(pumps_.empty());
}

TEST_F(DeferredPumpsTest, AConnectionGoneBeforeTheRunIsSkipped) {
  auto kept = make("kept");
  {
    auto gone = make("gone");
    pumps_.add(gone, true);
  }
  pumps_.add(kept, false);
  pumps_.run();
  EXPECT_EQ(log_, (std::vector<std::string>{"kept"}));
}

TEST_F(DeferredPumpsTest, ARunWithNothingAddedDoesNothing) {
  EXPECT_TRUE(pumps_.empty());
  pumps_.run();
  EXPECT_TRUE(log_.empty());
}

}  // namespace
}  // namespace leasehold::server
