// slots/shard_map.h: the static map of a sharded namespace as one shard is
// told it at start (DESIGN.md section 7): itself and its peers, each with a
// shard id, a client address and the hash slots it owns. It drives routing
// (-MOVED, the CLUSTER replies, the shard named in -WRONGSHARD); ownership
// itself is what the shard's own log applied (core SetOwnedSlots).
//
// A peer is written "ID@HOST:PORT=SLOTS", e.g. "2@127.0.0.1:7380=8192-16383"
// (SLOTS in SlotSet's text form; an IPv6 host in brackets).
//
// Errors: parse_shard_peer() and ShardMap::build() return kInvalidArgument
// naming the bad part: a malformed peer, a shard id outside 1..kMaxShardId or
// used twice, an address used twice, or slots claimed by two shards / owned
// by none (slots/partition.h). Nothing is built then.
// Thread-safety: a value type; const methods may be called concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"
#include "slots/slot_set.h"

namespace leasehold::slots {

// Shard ids are 1..kMaxShardId (a session id carries its shard's id in 10
// bits; core/types.h).
inline constexpr std::uint32_t kMaxShardId = 1023;

struct ShardAddress {
  std::uint32_t id = 0;
  std::string host;
  std::uint16_t port = 0;
  SlotSet slots;
  // "host:port" ("[host]:port" for an IPv6 host): the form of -MOVED.
  std::string endpoint() const;
};

// "ID@HOST:PORT=SLOTS".
Result<ShardAddress> parse_shard_peer(std::string_view text);

class ShardMap {
 public:
  // An empty map: not sharded (enabled() false).
  ShardMap() = default;
  // `self` and its peers; checks ids, addresses and that the slots are a
  // partition of all kSlotCount.
  static Result<ShardMap> build(ShardAddress self, std::vector<ShardAddress> peers);

  bool enabled() const { return !shards_.empty(); }
  // This shard (enabled() only).
  const ShardAddress& self() const { return shards_[self_]; }
  // Every shard, this one included, by id.
  const std::vector<ShardAddress>& shards() const { return shards_; }
  // The shard that owns `slot` (enabled() only).
  const ShardAddress& owner(Slot slot) const { return shards_[owner_[slot]]; }
  // The shard with this id, or nullptr.
  const ShardAddress* by_id(std::uint32_t id) const;

 private:
  std::vector<ShardAddress> shards_;
  std::size_t self_ = 0;
  std::array<std::uint16_t, kSlotCount> owner_{};  // index into shards_
};

}  // namespace leasehold::slots
