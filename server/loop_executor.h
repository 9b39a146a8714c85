// server/loop_executor.h: runs tasks on the libuv loop thread (node::Executor).
//
// post() may be called from any thread (the log's writer thread posts its
// completions here); the task runs later on the loop thread, in post order,
// woken through a uv_async_t. After close() (loop thread), posts are dropped.
// The executor function returned by executor() stays callable forever (it
// shares the queue state), so the Node and Log may outlive close().
//
// Thread-safety: post()/executor() from any thread; the rest on the loop thread.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "node/clock.h"

namespace leasehold::server {

class LoopExecutor {
 public:
  // Registers a uv_async_t on `loop`. `after_tasks` runs on the loop thread
  // after each drained batch (the server re-arms node timers there).
  LoopExecutor(uv_loop_t* loop, std::function<void()> after_tasks);
  ~LoopExecutor();
  LoopExecutor(const LoopExecutor&) = delete;
  LoopExecutor& operator=(const LoopExecutor&) = delete;

  node::Executor executor() const;
  // Stops accepting tasks and closes the async handle (loop thread). The
  // handle's close completes on the next loop run.
  void close();

 private:
  struct Shared {
    std::mutex mu;
    std::deque<std::function<void()>> tasks;
    uv_async_t* async = nullptr;  // null once closed
  };
  static void on_async(uv_async_t* handle);
  void drain();

  std::shared_ptr<Shared> shared_;
  uv_async_t* async_;
  std::function<void()> after_tasks_;
};

}  // namespace leasehold::server
