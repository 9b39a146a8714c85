// The demo's process control: piped lines, seeing a child stop, resuming it,
// exit codes, bounded waits, and a missing binary reported as an error.
#include <gtest/gtest.h>
#include <signal.h>

#include "demo/child_process.h"
#include "testkit/eventually.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

// A deadline `ms` from now: for a window in which nothing may happen (not scaled).
SteadyClock::time_point in(milliseconds ms) { return SteadyClock::now() + ms; }
// A deadline scaled(ms) from now: an upper bound on how long something may take.
SteadyClock::time_point within(milliseconds ms) { return SteadyClock::now() + leasehold::testing::scaled(ms); }

TEST(ChildProcess, ReadsLinesSeesAStopAndResumes) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo first; kill -STOP $$; echo second; exit 3"};
  spec.pipe_stdout = true;
  auto child = ChildProcess::spawn(spec);
  ASSERT_TRUE(child) << child.status().to_string();
  auto line = child->read_line(within(milliseconds(5000)));
  ASSERT_TRUE(line && line->has_value());
  EXPECT_EQ(**line, "first");
  ASSERT_TRUE(child->wait_stopped(within(milliseconds(5000))));
  // Stopped: nothing more arrives.
  auto none = child->read_line(in(milliseconds(200)));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), ErrorCode::kTimedOut);
  child->signal(SIGCONT);
  line = child->read_line(within(milliseconds(5000)));
  ASSERT_TRUE(line && line->has_value());
  EXPECT_EQ(**line, "second");
  line = child->read_line(within(milliseconds(5000)));
  ASSERT_TRUE(line);
  EXPECT_FALSE(line->has_value());  // end of output
  auto code = child->wait_exit(within(milliseconds(5000)));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 3);
}

TEST(ChildProcess, MissingBinaryIsAnError) {
  ChildSpec spec;
  spec.argv = {"/nonexistent/leasehold-demo-binary"};
  auto child = ChildProcess::spawn(spec);
  ASSERT_FALSE(child);
  EXPECT_EQ(child.status().code(), ErrorCode::kIoError);
}

TEST(ChildProcess, WaitsAreBoundedAndTheDestructorKillsAStoppedChild) {
  pid_t pid = -1;
  {
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "kill -STOP $$; exec sleep 60"};
    auto child = ChildProcess::spawn(spec);
    ASSERT_TRUE(child);
    pid = child->pid();
    ASSERT_TRUE(child->wait_stopped(within(milliseconds(5000))));
    auto code = child->wait_exit(in(milliseconds(100)));
    ASSERT_FALSE(code);
    EXPECT_EQ(code.status().code(), ErrorCode::kTimedOut);
  }
  EXPECT_NE(::kill(pid, 0), 0);  // killed and reaped
}

TEST(ChildProcess, RunToCompletionKillsAtTheTimeout) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "exec sleep 60"};  // exec: no orphan holding ctest's pipes
  const auto start = SteadyClock::now();
  auto code = run_to_completion(spec, milliseconds(200));
  ASSERT_FALSE(code);
  EXPECT_EQ(code.status().code(), ErrorCode::kTimedOut);
  EXPECT_LT(SteadyClock::now() - start, std::chrono::seconds(5));
  spec.argv = {"/bin/sh", "-c", "exit 7"};
  code = run_to_completion(spec, milliseconds(5000));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 7);
}

}  // namespace
}  // namespace leasehold::demo
