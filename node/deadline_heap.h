// node/deadline_heap.h: an indexed binary min-heap of session deadlines, the
// index behind Timers' session expiry (node/timers.h).
//
// Entries are (deadline, session id, slot), ordered by deadline, then id (so
// equal deadlines come out in id order, as from a std::set of pairs). Each
// entry points at a std::uint32_t `slot` that the caller owns (a field of its
// per-session record, at a stable address) in which the heap keeps the
// entry's current position, or kAbsent once the entry left the heap. So a
// deadline moves or an entry leaves in O(log n) without a search, and the
// heap costs 24 bytes per entry instead of a tree node per session. The
// entries live in a std::deque: it grows a block at a time, where a vector
// would copy (and, on a VM, page-fault) all of them at each doubling, a
// stall of ~90 ms at a million sessions on the project's test VM.
//
// Building: append() any number of entries, then build() once: O(n) (the
// bulk path used when a node re-arms every recovered session). push() keeps
// the heap order at once. At most kAbsent - 1 entries.
//
// Errors: none; a position out of range or a slot that disagrees with the
// heap is a bug and stops the process (LEASEHOLD_ASSERT).
// Ownership: slots are borrowed; the caller keeps each alive (and in place)
// while its entry is in the heap. Moving the heap keeps the slots valid.
// Thread-safety: none (the node's loop thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "core/types.h"
#include "node/clock.h"

namespace leasehold::node {

class DeadlineHeap {
 public:
  static constexpr std::uint32_t kAbsent = UINT32_MAX;

  struct Entry {
    TimePoint at{};
    core::SessionId id = 0;
    std::uint32_t* slot = nullptr;
  };

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  // The earliest entry; the heap must not be empty.
  const Entry& top() const { return entries_.front(); }
  // The deadline of the entry at `pos` (a value a slot holds).
  TimePoint at(std::uint32_t pos) const;

  // Adds an entry in heap order; *slot must be kAbsent.
  void push(TimePoint at, core::SessionId id, std::uint32_t* slot);
  // Adds an entry without restoring the heap order: call build() before any
  // other operation.
  void append(TimePoint at, core::SessionId id, std::uint32_t* slot);
  // Restores the heap order over everything appended: O(n).
  void build();
  // Moves the entry at `pos` to deadline `at`.
  void update(std::uint32_t pos, TimePoint at);
  // Removes the entry at `pos`; its slot becomes kAbsent.
  void erase(std::uint32_t pos);
  // Removes the earliest entry and returns it (its slot becomes kAbsent).
  Entry pop();

 private:
  static bool before(const Entry& a, const Entry& b) { return a.at < b.at || (a.at == b.at && a.id < b.id); }
  void place(std::size_t pos, const Entry& e) {
    entries_[pos] = e;
    *e.slot = static_cast<std::uint32_t>(pos);
  }
  // Moves the entry at `pos` up or down to its place.
  void sift_up(std::size_t pos);
  void sift_down(std::size_t pos);

  std::deque<Entry> entries_;
};

}  // namespace leasehold::node
