// node/commit_queue.cc: the proposals waiting for the next append
// (node/commit_queue.h).
#include "node/commit_queue.h"

#include <algorithm>

#include "common/assert.h"
#include "core/command_codec.h"

namespace leasehold::node {

std::size_t CommitQueue::encoded_size(const core::Command& command) {
  encode_scratch_.clear();
  core::encode_command_to(command, encode_scratch_);
  const std::size_t bytes = encode_scratch_.size();
  if (encode_scratch_.capacity() > kScratchKeepBytes) encode_scratch_ = std::string();  // one huge command
  return bytes;
}

void CommitQueue::push(core::Command command, Node::ProposeDone done, std::size_t bytes, bool deferred) {
  if (!deferred) ++urgent_;
  queued_.push_back({std::move(command), std::move(done), bytes, deferred});
}

Batch CommitQueue::take_batch(std::size_t max_commands, std::size_t max_bytes) {
  Batch batch;
  const std::size_t most = std::min(queued_.size(), max_commands);
  batch.commands.reserve(most);
  batch.dones.reserve(most);
  while (!queued_.empty() && batch.commands.size() < max_commands &&
         (batch.commands.empty() || batch.bytes + queued_.front().bytes <= max_bytes)) {
    Queued& q = queued_.front();
    if (!q.deferred) {
      LEASEHOLD_ASSERT(urgent_ > 0, "an urgent proposal taken with none counted ({} queued)", queued_.size());
      --urgent_;
    }
    batch.bytes += q.bytes;
    batch.commands.push_back(std::move(q.command));
    batch.dones.push_back(std::move(q.done));
    queued_.pop_front();
  }
  return batch;
}

std::deque<CommitQueue::Queued> CommitQueue::take_all() {
  std::deque<Queued> all = std::move(queued_);
  queued_.clear();
  urgent_ = 0;
  defer_until_.reset();
  return all;
}

void CommitQueue::bound_defer(TimePoint until) {
  if (!defer_until_ || until < *defer_until_) defer_until_ = until;
}

void CommitQueue::begin_linger(std::size_t target, TimePoint until) {
  linger_target_ = target;
  linger_until_ = until;
}

}  // namespace leasehold::node
