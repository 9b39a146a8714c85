// node/commit_queue.h: CommitQueue, the proposals waiting for the next log
// append (group commit, node/group_commit.cc), and the two bounds that may
// hold that append back:
//  - the commit linger (NodeOptions::commit_linger): the next append waits
//    until linger_target() proposals are queued or linger_until() passed;
//  - deferred enqueues (NodeOptions::enqueue_defer): proposals pushed as
//    `deferred` wait for company until defer_until(); the others are urgent.
// The queue decides nothing by itself: the node asks and starts appends.
//
// Invariant: the urgent count equals the queued proposals not deferred.
// Errors: none (the node checks the limits before push()).
// Ownership: owns the queued commands and their callbacks until taken.
// Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

#include "node/clock.h"
#include "node/commit_batch.h"

namespace leasehold::node {

class CommitQueue {
 public:
  struct Queued {
    core::Command command;
    Node::ProposeDone done;
    std::size_t bytes = 0;
    bool deferred = false;  // an enqueue that waits for company (enqueue_defer)
  };

  // The encoded size of `command`, for the batch limits; a scratch buffer
  // keeps this from allocating per proposal.
  std::size_t encoded_size(const core::Command& command);

  void push(core::Command command, Node::ProposeDone done, std::size_t bytes, bool deferred);
  std::size_t size() const { return queued_.size(); }
  bool empty() const { return queued_.empty(); }
  const core::Command& back() const { return queued_.back().command; }
  // True when every queued proposal is a deferred enqueue.
  bool only_deferred() const { return urgent_ == 0; }

  // Up to `max_commands` / `max_bytes` (at least one command) from the front.
  Batch take_batch(std::size_t max_commands, std::size_t max_bytes);
  // Everything queued, in order, without an append (the caller answers
  // them); the defer bound goes with them. The linger is left as it is.
  std::deque<Queued> take_all();

  // Deferred enqueues: the bound by which they start an append.
  const std::optional<TimePoint>& defer_until() const { return defer_until_; }
  void bound_defer(TimePoint until);  // the earlier of the current bound and `until`
  void clear_defer() { defer_until_.reset(); }

  // Commit linger.
  const std::optional<TimePoint>& linger_until() const { return linger_until_; }
  std::size_t linger_target() const { return linger_target_; }
  void begin_linger(std::size_t target, TimePoint until);
  void end_linger() { linger_until_.reset(); }

 private:
  static constexpr std::size_t kScratchKeepBytes = 64u << 10;  // a larger scratch is not kept

  std::deque<Queued> queued_;
  std::size_t urgent_ = 0;  // queued_ entries not deferred
  std::optional<TimePoint> defer_until_;
  std::optional<TimePoint> linger_until_;
  std::size_t linger_target_ = 0;
  std::string encode_scratch_;
};

}  // namespace leasehold::node
