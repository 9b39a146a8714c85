#include "etcd/mutex.h"

namespace leasehold::etcd {

Mutex::Mutex(Client& client, std::string prefix) : client_(client), prefix_(std::move(prefix)) {}

Status Mutex::lock(std::int64_t lease, std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  auto mine = enqueue(client_, prefix_, lease, "");
  if (!mine) return mine.status();
  Status waited = wait_until_first(client_, prefix_, *mine, deadline, std::move(stop));
  if (!waited) {
    (void)dequeue(client_, *mine);
    return waited;
  }
  held_ = *mine;
  return Status::ok();
}

Status Mutex::unlock() {
  if (!held_) return Status::ok();
  Status s = dequeue(client_, *held_);
  if (s) held_.reset();
  return s;
}

}  // namespace leasehold::etcd
