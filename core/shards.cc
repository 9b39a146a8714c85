// core/shards.cc: the SetOwnedSlots command (core/command.h) and the shard's
// part of a session id (core/types.h): which hash slots this shard owns, as
// its own log records them (DESIGN.md section 7).
#include <string>
#include <vector>

#include "core/state.h"
#include "slots/shard_map.h"

namespace leasehold::core::detail {

static_assert(slots::kMaxShardId == kMaxShardId, "the shard map and the session ids agree on the largest shard id");

namespace {

// SlotSet::ranges() of some set: inclusive, ascending, apart, in the space.
bool canonical(const std::vector<slots::SlotRange>& ranges) {
  std::uint32_t next = 0;  // the lowest slot the next range may start at
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const slots::SlotRange& r = ranges[i];
    if (r.first < next || r.last < r.first || r.last >= slots::kSlotCount || (i > 0 && r.first == next)) {
      return false;
    }
    next = std::uint32_t{r.last} + 1;
  }
  return true;
}

}  // namespace

Reply apply_set_owned_slots(Ctx& c, const SetOwnedSlots& o) {
  if (!canonical(o.slots)) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "owned slots must be inclusive ranges, ascending and apart, below " +
                           std::to_string(slots::kSlotCount));
  }
  if (o.shard == 0 || o.shard > kMaxShardId) {
    return Reply::fail(ErrorCode::kInvalidArgument,
                       "shard id " + std::to_string(o.shard) + " is outside 1.." + std::to_string(kMaxShardId));
  }
  if (c.s.shard != 0 && c.s.shard != o.shard) {
    return Reply::fail(ErrorCode::kConflict, "this log is shard " + std::to_string(c.s.shard) +
                                                 "'s; it cannot become shard " + std::to_string(o.shard) +
                                                 " (its sessions' ids name their shard)");
  }
  // Every id opened before (the bare revision) stays below every id opened
  // after (the shard's bits above the revision's).
  if (c.rev > kSessionSerialMask) {
    return Reply::fail(ErrorCode::kConflict, "revision " + std::to_string(c.rev) +
                                                 " is past the session id space of a shard");
  }
  c.s.shard = o.shard;
  c.s.owned_slots = slots::SlotSet();
  for (const slots::SlotRange& r : o.slots) c.s.owned_slots.add(r);
  return Reply::ok();
}

Reply check_session_id_space(const Ctx& c) {
  if (c.s.shard != 0 && c.rev > kSessionSerialMask) {
    return Reply::fail(ErrorCode::kLimitExceeded, "revision " + std::to_string(c.rev) +
                                                      " is past the session id space of a shard");
  }
  return Reply::ok();
}

SessionId new_session_id(const Ctx& c) {
  LEASEHOLD_ASSERT(c.s.shard == 0 || c.rev <= kSessionSerialMask, "session id space of shard {} ran out at {}",
                   c.s.shard, c.rev);
  return (static_cast<SessionId>(c.s.shard) << kShardIdShift) | c.rev;
}

SessionId highest_session_id(const CoreState& s) {
  if (s.shard == 0) return s.revision;
  if (s.revision > kSessionSerialMask) return ~SessionId{0};  // no session opens any more (check_session_id_space)
  return (static_cast<SessionId>(s.shard) << kShardIdShift) | s.revision;
}

}  // namespace leasehold::core::detail
