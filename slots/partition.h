// slots/partition.h: the check that a set of shards splits the hash slots
// between them, each slot owned by exactly one shard. Shards refuse to
// start on a map that fails it, so two shards never both grant a lock.
//
// Errors: check_partition() returns kInvalidArgument naming the slots
// claimed by two shards (and the two) or owned by none.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "leasehold/status.h"
#include "slots/slot_set.h"

namespace leasehold::slots {

struct ShardSlots {
  std::string name;  // how messages name the shard: its address, or its id
  SlotSet slots;
};

// OK when every one of the kSlotCount slots is in exactly one shard's set.
// An overlap is reported first (the first pair of shards that share slots),
// then the slots no shard owns.
Status check_partition(const std::vector<ShardSlots>& shards);

}  // namespace leasehold::slots
