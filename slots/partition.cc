#include "slots/partition.h"

namespace leasehold::slots {

Status check_partition(const std::vector<ShardSlots>& shards) {
  if (shards.empty()) return {ErrorCode::kInvalidArgument, "no shards: every slot is owned by none"};
  SlotSet owned;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    for (std::size_t j = i + 1; j < shards.size(); ++j) {
      const SlotSet both = shards[i].slots & shards[j].slots;
      if (!both.empty()) {
        return {ErrorCode::kInvalidArgument, "slots " + both.describe() + " are claimed by both " + shards[i].name +
                                                 " and " + shards[j].name};
      }
    }
    owned = owned | shards[i].slots;
  }
  const SlotSet missing = owned.complement();
  if (!missing.empty()) {
    return {ErrorCode::kInvalidArgument,
            "slots " + missing.describe() + " are owned by no shard (every slot from 0 to " +
                std::to_string(kSlotCount - 1) + " needs exactly one)"};
  }
  return Status::ok();
}

}  // namespace leasehold::slots
