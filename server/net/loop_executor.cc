#include "server/net/loop_executor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/assert.h"

namespace leasehold::server {
namespace {

template <typename Handle>
void close_and_delete(Handle* handle) {
  uv_close(reinterpret_cast<uv_handle_t*>(handle), [](uv_handle_t* h) { delete reinterpret_cast<Handle*>(h); });
}

}  // namespace

Result<std::unique_ptr<LoopExecutor>> LoopExecutor::open(uv_loop_t* loop) {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return Status(ErrorCode::kIoError, std::string("cannot create the loop's eventfd: ") + std::strerror(errno));
  }
  auto shared = std::make_shared<Shared>(fd);  // owns fd from here on
  auto* poll = new uv_poll_t;
  if (const int rc = uv_poll_init(loop, poll, fd); rc != 0) {
    delete poll;
    return Status(ErrorCode::kIoError, std::string("cannot watch the loop's eventfd: ") + uv_strerror(rc));
  }
  // uv_check_init and uv_idle_init cannot fail.
  auto* check = new uv_check_t;
  uv_check_init(loop, check);
  auto* idle = new uv_idle_t;
  uv_idle_init(loop, idle);
  std::unique_ptr<LoopExecutor> executor(new LoopExecutor(shared, poll, check, idle));
  poll->data = executor.get();
  check->data = executor.get();
  shared->owner = executor.get();
  if (const int rc = uv_poll_start(poll, UV_READABLE, &LoopExecutor::on_readable); rc != 0) {
    executor->close();
    return Status(ErrorCode::kIoError, std::string("cannot watch the loop's eventfd: ") + uv_strerror(rc));
  }
  uv_check_start(check, &LoopExecutor::on_check);
  return executor;
}

LoopExecutor::Shared::~Shared() { ::close(event_fd); }

void LoopExecutor::Shared::post(std::function<void()> task) {
  if (std::this_thread::get_id() == loop_thread.load(std::memory_order_relaxed)) {
    // On the loop thread: no lock, no wake-up (see the header). `owner` is
    // loop-thread state, null once closed.
    if (owner != nullptr) owner->post_local(std::move(task));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!open) return;  // loop gone: dropped (documented)
    tasks.push_back(std::move(task));
    if (signalled) return;  // a wake-up is already on its way
    signalled = true;
  }
  const std::uint64_t one = 1;
  ssize_t n;
  do {
    n = ::write(event_fd, &one, sizeof one);
  } while (n < 0 && errno == EINTR);
  // Only a counter at its maximum could refuse (EAGAIN), and then the loop
  // is readable anyway; anything else would leave the task unrun.
  LEASEHOLD_ASSERT(n == static_cast<ssize_t>(sizeof one) || errno == EAGAIN, "cannot wake the loop: {}",
                   std::strerror(errno));
}

LoopExecutor::~LoopExecutor() { close(); }

node::Executor LoopExecutor::executor() const {
  return [shared = shared_](std::function<void()> task) { shared->post(std::move(task)); };
}

void LoopExecutor::close() {
  if (poll_ == nullptr) return;
  std::deque<std::function<void()>> dropped;  // destroyed outside the lock: a task's captures may post
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->open = false;
    dropped.swap(shared_->tasks);
  }
  shared_->owner = nullptr;
  std::deque<std::function<void()>> dropped_local;
  dropped_local.swap(local_);
  poll_->data = nullptr;
  check_->data = nullptr;
  close_and_delete(poll_);
  close_and_delete(check_);
  close_and_delete(idle_);
  poll_ = nullptr;
  check_ = nullptr;
  idle_ = nullptr;
}

void LoopExecutor::on_readable(uv_poll_t* handle, int status, int /*events*/) {
  auto* self = static_cast<LoopExecutor*>(handle->data);
  LEASEHOLD_ASSERT(status == 0, "polling the loop's eventfd failed: {}", uv_strerror(status));
  if (self != nullptr) self->drain();
}

void LoopExecutor::on_check(uv_check_t* handle) {
  auto* self = static_cast<LoopExecutor*>(handle->data);
  if (self != nullptr) self->run_local();
}

void LoopExecutor::note_loop_thread() {
  if (shared_->loop_thread.load(std::memory_order_relaxed) == std::thread::id{}) {
    shared_->loop_thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  LEASEHOLD_ASSERT(shared_->loop_thread.load(std::memory_order_relaxed) == std::this_thread::get_id(),
                   "the loop executor's loop ran on another thread");
}

void LoopExecutor::drain() {
  note_loop_thread();
  // Reset the counter first: a post after it either is in this batch or
  // writes the eventfd again (it finds signalled cleared below).
  std::uint64_t count = 0;
  ssize_t n;
  do {
    n = ::read(shared_->event_fd, &count, sizeof count);
  } while (n < 0 && errno == EINTR);
  LEASEHOLD_ASSERT(n == static_cast<ssize_t>(sizeof count) || errno == EAGAIN, "cannot read the loop's eventfd: {}",
                   std::strerror(errno));
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->signalled = false;
    batch.swap(shared_->tasks);
  }
  for (auto& task : batch) task();
}

void LoopExecutor::post_local(std::function<void()> task) {
  local_.push_back(std::move(task));
  // An active idle handle makes the loop poll without blocking, so the
  // check handle runs this turn even when no I/O is due (starting an active
  // one does nothing).
  uv_idle_start(idle_, [](uv_idle_t*) {});
}

void LoopExecutor::run_local() {
  note_loop_thread();
  if (local_.empty()) return;
  std::deque<std::function<void()>> batch;
  batch.swap(local_);
  const std::shared_ptr<Shared> shared = shared_;  // a task may close, even destroy, this executor
  for (auto& task : batch) task();
  // Posts made by these tasks wait for the next turn's check (idle stays on).
  if (shared->owner == this && local_.empty()) uv_idle_stop(idle_);
}

}  // namespace leasehold::server
