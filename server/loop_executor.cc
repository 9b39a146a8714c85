#include "server/loop_executor.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/assert.h"

namespace leasehold::server {

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
  std::unique_ptr<LoopExecutor> executor(new LoopExecutor(std::move(shared), poll));
  poll->data = executor.get();
  if (const int rc = uv_poll_start(poll, UV_READABLE, &LoopExecutor::on_readable); rc != 0) {
    executor->close();
    return Status(ErrorCode::kIoError, std::string("cannot watch the loop's eventfd: ") + uv_strerror(rc));
  }
  return executor;
}

LoopExecutor::Shared::~Shared() { ::close(event_fd); }

void LoopExecutor::Shared::post(std::function<void()> task) {
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
  poll_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
  poll_ = nullptr;
}

void LoopExecutor::on_readable(uv_poll_t* handle, int status, int /*events*/) {
  auto* self = static_cast<LoopExecutor*>(handle->data);
  LEASEHOLD_ASSERT(status == 0, "polling the loop's eventfd failed: {}", uv_strerror(status));
  if (self != nullptr) self->drain();
}

void LoopExecutor::drain() {
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

}  // namespace leasehold::server
