// node/apply_queue.cc: durable entries waiting to be applied
// (node/apply_queue.h).
#include "node/apply_queue.h"

#include "common/assert.h"

namespace leasehold::node {

void ApplyQueue::push(log::LogIndex index, Batch batch) {
  unapplied_ += batch.commands.size();
  entries_.push_back(Entry{index, std::move(batch), 0});
}

std::size_t ApplyQueue::take_next() {
  Entry& entry = entries_.front();
  LEASEHOLD_ASSERT(entry.next < entry.batch.commands.size() && unapplied_ > 0,
                   "entry {} has no command left to apply", entry.index);
  --unapplied_;
  return entry.next++;
}

void ApplyQueue::pop_front() {
  LEASEHOLD_ASSERT(entries_.front().next == entries_.front().batch.commands.size(),
                   "entry {} removed before it was fully applied", entries_.front().index);
  entries_.pop_front();
}

bool ApplyQueue::claim_step() {
  if (step_posted_) return false;
  step_posted_ = true;
  return true;
}

}  // namespace leasehold::node
