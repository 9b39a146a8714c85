// slots/slot_set.h: a set of hash slots (slots/hash_slot.h), as a shard
// owns them, and its text form: comma-separated slots and inclusive ranges,
// "0-8191,9000,10000-10010", the form of `--shard-slots` and of CLUSTER
// commands' ranges.
//
// Errors: parse() returns kInvalidArgument naming the bad part (not a
// number, out of range, a range that runs backwards, a slot listed twice)
// and builds nothing.
// Thread-safety: a value type; const methods may be called concurrently.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"
#include "slots/hash_slot.h"

namespace leasehold::slots {

// An inclusive run of slots, first <= last < kSlotCount.
struct SlotRange {
  Slot first = 0;
  Slot last = 0;
  bool operator==(const SlotRange&) const = default;
};

class SlotSet {
 public:
  SlotSet() = default;
  static SlotSet all();
  static Result<SlotSet> parse(std::string_view text);

  // Adds the inclusive range; first <= last < kSlotCount (asserted).
  void add(SlotRange range);
  void add(Slot slot) { add(SlotRange{slot, slot}); }
  void remove(Slot slot);

  bool contains(Slot slot) const;
  std::size_t count() const { return bits_.count(); }
  bool empty() const { return bits_.none(); }

  // The slots as maximal runs, lowest first.
  std::vector<SlotRange> ranges() const;
  // "0-8191,9000" ("" when empty); parse(to_string()) gives the set back.
  std::string to_string() const;
  // to_string() cut after `max_ranges` runs, with "and N more ranges": for
  // error messages about sets that may be scattered.
  std::string describe(std::size_t max_ranges = 4) const;

  SlotSet operator&(const SlotSet& other) const;
  SlotSet operator|(const SlotSet& other) const;
  SlotSet complement() const;
  bool operator==(const SlotSet& other) const = default;

 private:
  std::bitset<kSlotCount> bits_;
};

}  // namespace leasehold::slots
