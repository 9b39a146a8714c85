// node/apply_waiters.cc: callers waiting for an applied index
// (node/apply_waiters.h).
#include "node/apply_waiters.h"

namespace leasehold::node {

std::vector<ApplyWaiters::Done> ApplyWaiters::take_through(log::LogIndex applied) {
  std::vector<Done> due;
  const auto end = waiters_.upper_bound(applied);
  for (auto it = waiters_.begin(); it != end; ++it) due.push_back(std::move(it->second));
  waiters_.erase(waiters_.begin(), end);
  return due;
}

std::vector<ApplyWaiters::Done> ApplyWaiters::take_all() {
  std::vector<Done> all;
  all.reserve(waiters_.size());
  for (auto& [index, done] : waiters_) all.push_back(std::move(done));
  waiters_.clear();
  return all;
}

}  // namespace leasehold::node
