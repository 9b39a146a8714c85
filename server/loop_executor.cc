#include "server/loop_executor.h"

namespace leasehold::server {

LoopExecutor::LoopExecutor(uv_loop_t* loop, std::function<void()> after_tasks)
    : shared_(std::make_shared<Shared>()), async_(new uv_async_t), after_tasks_(std::move(after_tasks)) {
  uv_async_init(loop, async_, &LoopExecutor::on_async);
  async_->data = this;
  shared_->async = async_;
}

LoopExecutor::~LoopExecutor() { close(); }

node::Executor LoopExecutor::executor() const {
  std::shared_ptr<Shared> shared = shared_;
  return [shared](std::function<void()> task) {
    std::lock_guard<std::mutex> lock(shared->mu);
    if (shared->async == nullptr) return;  // loop gone: dropped (documented)
    shared->tasks.push_back(std::move(task));
    uv_async_send(shared->async);
  };
}

void LoopExecutor::close() {
  if (async_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->async = nullptr;
    shared_->tasks.clear();
  }
  async_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(async_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
  async_ = nullptr;
}

void LoopExecutor::on_async(uv_async_t* handle) {
  auto* self = static_cast<LoopExecutor*>(handle->data);
  if (self != nullptr) self->drain();
}

void LoopExecutor::drain() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    batch.swap(shared_->tasks);
  }
  for (auto& task : batch) task();
  if (after_tasks_) after_tasks_();
}

}  // namespace leasehold::server
