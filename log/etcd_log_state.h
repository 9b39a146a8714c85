// log/etcd_log_state.h: EtcdLog's worker thread and shared state (private
// to etcd_log*.cc).
// Thread-safety: every field except append_in_flight is guarded by `mu`.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "log/etcd_log.h"
#include "log/etcd_log_format.h"

namespace leasehold::log {

// One thread running tasks in order (appends, snapshot saves, callbacks).
class EtcdLog::Worker {
 public:
  Worker() : thread_([this] { run(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and every issued task ran
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

struct EtcdLog::State {
  mutable std::mutex mu;
  std::optional<etcd::QueueKey> term;
  Position position;
  std::int64_t read_revision = 0;
  std::int64_t last_append_revision = 0;  // of the newest successful own append
  std::int64_t last_meta_revision = 0;  // etcd revision of our last snapshot meta write
  std::atomic<bool> append_in_flight{false};  // set by the loop thread, cleared by the worker
};

}  // namespace leasehold::log
