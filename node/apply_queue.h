// node/apply_queue.h: ApplyQueue, the durable entries not yet fully applied,
// in log order (NodeOptions::apply_step: a large batch is applied in steps,
// the front entry from its `next` command on). The node's apply loop
// (node/group_commit.cc) takes commands from it; the queue keeps the count
// of commands not yet applied and whether a continuation step is posted.
//
// Invariant: unapplied() is the number of commands in the queue from each
// entry's `next` on. While mid_batch(), the state is between two log
// entries (no snapshot can be labelled with an index).
// Errors: none. Ownership: owns the entries (and their callbacks).
// Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <deque>

#include "log/log.h"
#include "node/commit_batch.h"

namespace leasehold::node {

class ApplyQueue {
 public:
  struct Entry {
    log::LogIndex index = 0;
    Batch batch;
    std::size_t next = 0;  // the first command not yet applied
  };

  void push(log::LogIndex index, Batch batch);
  bool empty() const { return entries_.empty(); }
  Entry& front() { return entries_.front(); }
  // The front entry's next command is being applied: its position.
  std::size_t take_next();
  // The front entry is fully applied.
  void pop_front();
  std::size_t unapplied() const { return unapplied_; }
  bool mid_batch() const { return !entries_.empty() && entries_.front().next > 0; }

  // A continuation step: claim_step() is true when none was posted yet
  // (then one is now); step_ran() when it runs.
  bool claim_step();
  void step_ran() { step_posted_ = false; }

 private:
  std::deque<Entry> entries_;
  std::size_t unapplied_ = 0;
  bool step_posted_ = false;
};

}  // namespace leasehold::node
