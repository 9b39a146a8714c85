// server/loop_executor.h: runs tasks on the libuv loop thread (node::Executor).
//
// post() (the function executor() returns) may be called from any thread:
// the log's writer thread posts its completions here. Tasks run later on
// the loop thread, in post order, in batches. The loop is woken through an
// eventfd watched by a uv_poll_t, written once per batch by the post that
// finds the queue unsignalled, outside the queue's lock.
//
// Why not a uv_async_t: with Debian 12's libuv (1.44) a woken loop that
// finds the handle's send still in progress (the poster is still inside
// its write(2) to the eventfd, or was preempted there) spins, pausing and
// calling sched_yield(), until that send returns. Every append completion
// crosses threads; one W2 profile found 7.8% of the server's samples in
// that spin (docs/bench.md, "The fifth cause").
//
// Errors: open() returns kIoError when the eventfd or its poll handle
// cannot be created.
// Ownership: the eventfd belongs to the queue state shared with every copy
// of the executor function, and is closed with the last of them, so a post
// racing close() never writes to a closed (or reused) descriptor. After
// close() (loop thread) posts are dropped; the executor function stays
// callable forever, so the Node and Log may outlive the executor.
// Thread-safety: the executor function from any thread; open(), close()
// and the destructor on the loop thread.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "leasehold/status.h"
#include "node/clock.h"

namespace leasehold::server {

class LoopExecutor {
 public:
  static Result<std::unique_ptr<LoopExecutor>> open(uv_loop_t* loop);
  ~LoopExecutor();
  LoopExecutor(const LoopExecutor&) = delete;
  LoopExecutor& operator=(const LoopExecutor&) = delete;

  node::Executor executor() const;
  // Stops accepting tasks, drops the queued ones and closes the poll
  // handle (loop thread). The handle's close completes on the next loop run.
  void close();

 private:
  struct Shared {
    explicit Shared(int fd) : event_fd(fd) {}
    ~Shared();
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
    void post(std::function<void()> task);

    const int event_fd;
    std::mutex mu;
    std::deque<std::function<void()>> tasks;  // under mu
    bool signalled = false;                   // under mu: the eventfd was written since the last drain
    bool open = true;                         // under mu
  };
  LoopExecutor(std::shared_ptr<Shared> shared, uv_poll_t* poll) : shared_(std::move(shared)), poll_(poll) {}
  static void on_readable(uv_poll_t* handle, int status, int events);
  void drain();

  std::shared_ptr<Shared> shared_;
  uv_poll_t* poll_;  // null once closed; deleted by its close callback
};

}  // namespace leasehold::server
