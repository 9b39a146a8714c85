// tests/server/loop_executor_test.cc: server/net/loop_executor.h runs every task
// posted from any thread exactly once, on the loop thread, in each poster's
// order; drops posts after close(); and its executor function stays safe to
// call after the executor is gone. Posts from the loop thread itself write
// no eventfd, run without waiting for I/O, keep their order and are dropped
// by close() too.
#include "server/net/loop_executor.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#include "testkit/eventually.h"

namespace leasehold::server {
namespace {

// The scheduler state of thread `tid` of this process ('R' running, 'S'
// sleeping, ...), from /proc/self/task/<tid>/stat; '?' if unreadable.
char thread_state(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// A loop with an executor and a guard timer that stops the loop after 20 s
// (a task that never arrives fails the test instead of hanging it).
class LoopExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    auto executor = LoopExecutor::open(&loop_);
    ASSERT_TRUE(executor) << executor.status().message();
    executor_ = std::move(executor).value();
    uv_timer_init(&loop_, &guard_);
    guard_.data = this;
    uv_timer_start(&guard_, [](uv_timer_t* t) { static_cast<LoopExecutorTest*>(t->data)->finish(); }, 20'000, 0);
  }
  void TearDown() override {
    finish();
    uv_run(&loop_, UV_RUN_DEFAULT);  // runs the close callbacks
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  // Closes the executor and the guard; the loop's uv_run then returns.
  void finish() {
    if (finished_at_) return;
    executor_->close();
    uv_close(reinterpret_cast<uv_handle_t*>(&guard_), nullptr);
    finished_at_ = std::chrono::steady_clock::now();
  }

  uv_loop_t loop_{};
  uv_timer_t guard_{};
  std::unique_ptr<LoopExecutor> executor_;
  std::optional<std::chrono::steady_clock::time_point> finished_at_;
};

TEST_F(LoopExecutorTest, EveryTaskFromEveryThreadRunsOnceOnTheLoopThreadInPostOrder) {
  constexpr int kThreads = 4;
  constexpr int kTasksEach = 20'000;
  const std::thread::id loop_thread = std::this_thread::get_id();
  std::vector<std::vector<int>> seen(kThreads);  // loop thread only
  int total = 0;
  bool off_loop = false;
  node::Executor post = executor_->executor();
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&, t] {
      for (int i = 0; i < kTasksEach; ++i) {
        post([&, t, i] {
          off_loop = off_loop || std::this_thread::get_id() != loop_thread;
          seen[t].push_back(i);
          if (++total == kThreads * kTasksEach) finish();
        });
        if (i % 1000 == 0) std::this_thread::yield();  // let the loop drain between bursts
      }
    });
  }
  uv_run(&loop_, UV_RUN_DEFAULT);
  for (auto& p : posters) p.join();
  EXPECT_FALSE(off_loop);
  ASSERT_EQ(total, kThreads * kTasksEach) << "the guard timer stopped the loop: tasks were lost";
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<std::size_t>(kTasksEach));
    for (int i = 0; i < kTasksEach; ++i) ASSERT_EQ(seen[t][i], i) << "poster " << t;
  }
}

TEST_F(LoopExecutorTest, ATaskPostedByATaskRunsToo) {
  node::Executor post = executor_->executor();
  int depth = 0;
  std::function<void()> chain = [&] {
    if (++depth == 1000) return finish();
    post(chain);
  };
  post(chain);
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_EQ(depth, 1000);
}

TEST_F(LoopExecutorTest, PostsAfterCloseAreDroppedAndTheFunctionOutlivesTheExecutor) {
  node::Executor post = executor_->executor();
  bool ran = false;
  post([&] { ran = true; });
  finish();  // close drops the queued task
  post([&] { ran = true; });
  uv_run(&loop_, UV_RUN_DEFAULT);
  executor_.reset();
  post([&] { ran = true; });  // the shared state (and its eventfd) is still there
  EXPECT_FALSE(ran);
}

TEST_F(LoopExecutorTest, AWakeUpFromAnotherThreadEndsAnIdlePoll) {
  // The loop sleeps in epoll with nothing due for 20 s; one post must wake it.
  node::Executor post = executor_->executor();
  const auto loop_tid = static_cast<pid_t>(::syscall(SYS_gettid));
  const auto start = std::chrono::steady_clock::now();
  std::thread poster([&] {
    // Posts once the loop thread sleeps in the kernel (its poll for I/O).
    EXPECT_TRUE(testing::eventually([&] { return thread_state(loop_tid) == 'S'; }, std::chrono::seconds(10),
                                    std::chrono::milliseconds(1)))
        << "the loop thread never blocked";
    post([&] { finish(); });
  });
  uv_run(&loop_, UV_RUN_DEFAULT);
  poster.join();
  ASSERT_TRUE(finished_at_);
  // Checks elapsed time on purpose: the post woke the loop, well before
  // the 20 s guard timer.
  EXPECT_LT(*finished_at_ - start, std::chrono::seconds(15)) << "woken by the guard timer, not the post";
}

// The process's write(2) calls so far (/proc/self/io, "syscw").
std::optional<long> write_syscalls() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long value = 0;
  while (io >> key >> value) {
    if (key == "syscw:") return value;
  }
  return std::nullopt;
}

// Runs one turn of the loop so that the executor knows its thread.
void learn_loop_thread(uv_loop_t* loop) { uv_run(loop, UV_RUN_NOWAIT); }

TEST_F(LoopExecutorTest, PostsFromTheLoopThreadWriteNoEventfd) {
  const std::optional<long> before = write_syscalls();
  if (!before) GTEST_SKIP() << "no /proc/self/io here";
  learn_loop_thread(&loop_);
  node::Executor post = executor_->executor();
  int depth = 0;
  std::optional<long> after;
  std::function<void()> chain = [&] {
    if (++depth == 1000) {
      after = write_syscalls();
      return finish();
    }
    post(chain);
  };
  uv_timer_t start{};
  uv_timer_init(&loop_, &start);
  start.data = &chain;
  uv_timer_start(&start, [](uv_timer_t* t) { (*static_cast<std::function<void()>*>(t->data))(); }, 0, 0);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t*>(&start), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);  // the close completes before `start` goes out of scope
  ASSERT_EQ(depth, 1000);
  ASSERT_TRUE(after);
  // Through the eventfd each of the 999 posts would be one write(2).
  EXPECT_LT(*after - *before, 20) << "posts from the loop thread went through the eventfd";
}

TEST_F(LoopExecutorTest, APostFromTheLoopThreadRunsWithoutWaitingForIo) {
  // Nothing is due for 20 s (the guard): the post alone must keep the next
  // poll from blocking.
  learn_loop_thread(&loop_);
  node::Executor post = executor_->executor();
  struct Context {
    node::Executor post;
    std::function<void()> finish;
  } context{post, [this] { finish(); }};
  uv_timer_t start{};
  uv_timer_init(&loop_, &start);
  start.data = &context;
  uv_timer_start(
      &start,
      [](uv_timer_t* t) {
        auto* c = static_cast<Context*>(t->data);
        c->post(c->finish);
      },
      0, 0);
  const auto started = std::chrono::steady_clock::now();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t*>(&start), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);  // the close completes before `start` goes out of scope
  ASSERT_TRUE(finished_at_);
  EXPECT_LT(*finished_at_ - started, std::chrono::seconds(15)) << "run by the guard timer, not the post";
}

TEST_F(LoopExecutorTest, LoopThreadPostsRunInOrderAndAreDroppedByClose) {
  learn_loop_thread(&loop_);
  node::Executor post = executor_->executor();
  std::vector<int> order;
  bool dropped_ran = false;
  post([&] {  // made before the loop runs again: from the loop thread
    for (int i = 0; i < 5; ++i) post([&order, i] { order.push_back(i); });
    post([&] {
      post([&] { dropped_ran = true; });
      finish();  // closes the executor: the post just made is dropped
    });
  });
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(dropped_ran);
}

}  // namespace
}  // namespace leasehold::server
