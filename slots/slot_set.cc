#include "slots/slot_set.h"

#include <charconv>

#include "common/assert.h"

namespace leasehold::slots {
namespace {

Status bad(std::string message) { return {ErrorCode::kInvalidArgument, std::move(message)}; }

// One slot number: decimal digits only, in [0, kSlotCount).
Result<Slot> parse_slot(std::string_view text, std::string_view part) {
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return bad("'" + std::string(part) + "' is not a slot or a slot range (a slot is a number from 0 to " +
               std::to_string(kSlotCount - 1) + ", a range is FIRST-LAST)");
  }
  std::uint32_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if (value >= kSlotCount) {
    return bad("slot " + std::string(text) + " is out of range (0 to " + std::to_string(kSlotCount - 1) + ")");
  }
  return static_cast<Slot>(value);
}

std::string range_text(SlotRange r) {
  return r.first == r.last ? std::to_string(r.first) : std::to_string(r.first) + "-" + std::to_string(r.last);
}

}  // namespace

SlotSet SlotSet::all() {
  SlotSet s;
  s.bits_.set();
  return s;
}

Result<SlotSet> SlotSet::parse(std::string_view text) {
  if (text.empty()) return bad("no slots given (expected e.g. 0-8191,9000)");
  SlotSet set;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (part.empty()) return bad("an empty entry in the slot list '" + std::string(text) + "'");
    const std::size_t dash = part.find('-');
    auto first = parse_slot(part.substr(0, dash), part);
    if (!first) return first.status();
    Slot last = *first;
    if (dash != std::string_view::npos) {
      auto end = parse_slot(part.substr(dash + 1), part);
      if (!end) return end.status();
      last = *end;
      if (last < *first) return bad("slot range " + std::string(part) + " runs backwards");
    }
    SlotSet piece;
    piece.add(SlotRange{*first, last});
    const SlotSet twice = set & piece;
    if (!twice.empty()) return bad("slots " + twice.describe() + " are listed twice in '" + std::string(text) + "'");
    set = set | piece;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return set;
}

void SlotSet::add(SlotRange range) {
  LEASEHOLD_ASSERT(range.first <= range.last && range.last < kSlotCount, "slot range {}-{}", range.first, range.last);
  for (std::uint32_t s = range.first; s <= range.last; ++s) bits_.set(s);
}

void SlotSet::remove(Slot slot) {
  LEASEHOLD_ASSERT(slot < kSlotCount, "slot {}", slot);
  bits_.reset(slot);
}

bool SlotSet::contains(Slot slot) const { return slot < kSlotCount && bits_.test(slot); }

std::vector<SlotRange> SlotSet::ranges() const {
  std::vector<SlotRange> out;
  std::uint32_t s = 0;
  while (s < kSlotCount) {
    if (!bits_.test(s)) {
      ++s;
      continue;
    }
    const std::uint32_t first = s;
    while (s + 1 < kSlotCount && bits_.test(s + 1)) ++s;
    out.push_back(SlotRange{static_cast<Slot>(first), static_cast<Slot>(s)});
    ++s;
  }
  return out;
}

std::string SlotSet::to_string() const { return describe(kSlotCount); }

std::string SlotSet::describe(std::size_t max_ranges) const {
  const std::vector<SlotRange> runs = ranges();
  std::string out;
  for (std::size_t i = 0; i < runs.size() && i < max_ranges; ++i) {
    if (i > 0) out += ',';
    out += range_text(runs[i]);
  }
  if (runs.size() > max_ranges) out += " and " + std::to_string(runs.size() - max_ranges) + " more ranges";
  return out;
}

SlotSet SlotSet::operator&(const SlotSet& other) const {
  SlotSet s;
  s.bits_ = bits_ & other.bits_;
  return s;
}

SlotSet SlotSet::operator|(const SlotSet& other) const {
  SlotSet s;
  s.bits_ = bits_ | other.bits_;
  return s;
}

SlotSet SlotSet::complement() const {
  SlotSet s;
  s.bits_ = ~bits_;
  return s;
}

}  // namespace leasehold::slots
