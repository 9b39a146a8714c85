// node/append_slot.cc: the append in flight (node/append_slot.h).
#include "node/append_slot.h"

#include "common/assert.h"

namespace leasehold::node {

void AppendSlot::begin(Batch batch, TimePoint now) {
  LEASEHOLD_ASSERT(!busy_, "a second append begun with {} commands in flight", batch_.commands.size());
  batch_ = std::move(batch);
  busy_ = true;
  started_ = now;
}

Batch AppendSlot::finish(TimePoint now) {
  LEASEHOLD_ASSERT(busy_, "an append finished with none in flight");
  last_latency_ = now - started_;
  busy_ = false;
  Batch batch = std::move(batch_);
  batch_ = Batch{};
  return batch;
}

}  // namespace leasehold::node
