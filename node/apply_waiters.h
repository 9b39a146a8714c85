// node/apply_waiters.h: ApplyWaiters, callers of Node::when_applied()
// waiting for the node to apply a log index (cluster read barriers). The
// node takes the ones an apply satisfied (take_through) and answers them
// later, or all of them with an error when it steps down (take_all).
//
// Errors: none (the node answers). Ownership: owns the callbacks until taken.
// Thread-safety: loop thread only.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "leasehold/status.h"
#include "log/log.h"

namespace leasehold::node {

class ApplyWaiters {
 public:
  using Done = std::function<void(Status)>;

  void add(log::LogIndex index, Done done) { waiters_.emplace(index, std::move(done)); }
  bool empty() const { return waiters_.empty(); }
  // The waiters for `applied` or below, lowest index first.
  std::vector<Done> take_through(log::LogIndex applied);
  std::vector<Done> take_all();

 private:
  std::multimap<log::LogIndex, Done> waiters_;
};

}  // namespace leasehold::node
