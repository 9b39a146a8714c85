// server/net/loop_executor.h: runs tasks on the libuv loop thread (node::Executor).
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
// that spin, and 1,493 sched_yield() calls in 5 s of W2 (none since).
//
// A post from the loop thread itself (a task that schedules more work, the
// node deferring an append behind what the loop already read) crosses no
// thread: it goes to a queue of the loop's own, which a uv_check_t runs
// after the current turn's I/O callbacks; while that queue is not empty a
// uv_idle_t keeps the next poll from blocking. So it costs no eventfd
// write, read or extra wake-up. The loop thread is known once the loop ran
// one of the executor's handles; posts before that take the eventfd like
// any other.
// Each poster's order holds: the loop thread's posts from before it was
// known are drained by the next poll at the latest, before the check phase
// that runs its later ones.
//
// Errors: open() returns kIoError when the eventfd or a handle cannot be
// created.
// Ownership: the eventfd belongs to the queue state shared with every copy
// of the executor function, and is closed with the last of them, so a post
// racing close() never writes to a closed (or reused) descriptor. After
// close() (loop thread) posts are dropped; the executor function stays
// callable forever, so the Node and Log may outlive the executor.
// Thread-safety: the executor function from any thread; open(), close()
// and the destructor on the loop thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

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
  // Stops accepting tasks, drops the queued ones and closes the handles
  // (loop thread). The handles' close completes on the next loop run.
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
    // The thread running the loop, once it ran one of our handles (the
    // default id before: no thread has it).
    std::atomic<std::thread::id> loop_thread{};
    LoopExecutor* owner = nullptr;  // loop thread only: the open executor, null after close()
  };
  LoopExecutor(std::shared_ptr<Shared> shared, uv_poll_t* poll, uv_check_t* check, uv_idle_t* idle)
      : shared_(std::move(shared)), poll_(poll), check_(check), idle_(idle) {}
  static void on_readable(uv_poll_t* handle, int status, int events);
  static void on_check(uv_check_t* handle);
  void note_loop_thread();  // the first callback on the loop records its thread; asserts it never changes
  void drain();
  void post_local(std::function<void()> task);  // loop thread
  void run_local();                             // loop thread, from the check handle

  std::shared_ptr<Shared> shared_;
  // Null once closed; each is deleted by its close callback.
  uv_poll_t* poll_;
  uv_check_t* check_;
  uv_idle_t* idle_;
  std::deque<std::function<void()>> local_;  // loop thread's own posts, run by the check handle
};

}  // namespace leasehold::server
