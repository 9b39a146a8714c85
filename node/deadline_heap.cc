#include "node/deadline_heap.h"

#include "common/assert.h"

namespace leasehold::node {

TimePoint DeadlineHeap::at(std::uint32_t pos) const {
  LEASEHOLD_ASSERT(pos < entries_.size(), "deadline heap position {} of {}", pos, entries_.size());
  return entries_[pos].at;
}

void DeadlineHeap::append(TimePoint at, core::SessionId id, std::uint32_t* slot) {
  LEASEHOLD_ASSERT(*slot == kAbsent, "session {} is in the deadline heap twice", id);
  LEASEHOLD_ASSERT(entries_.size() < kAbsent - 1, "deadline heap full ({} entries)", entries_.size());
  entries_.push_back(Entry{at, id, slot});
  *slot = static_cast<std::uint32_t>(entries_.size() - 1);
}

void DeadlineHeap::push(TimePoint at, core::SessionId id, std::uint32_t* slot) {
  append(at, id, slot);
  sift_up(entries_.size() - 1);
}

void DeadlineHeap::build() {
  for (std::size_t i = entries_.size() / 2; i-- > 0;) sift_down(i);
}

void DeadlineHeap::update(std::uint32_t pos, TimePoint at) {
  LEASEHOLD_ASSERT(pos < entries_.size(), "deadline heap position {} of {}", pos, entries_.size());
  const TimePoint old = entries_[pos].at;
  entries_[pos].at = at;
  if (at < old) {
    sift_up(pos);
  } else {
    sift_down(pos);
  }
}

void DeadlineHeap::erase(std::uint32_t pos) {
  LEASEHOLD_ASSERT(pos < entries_.size(), "deadline heap position {} of {}", pos, entries_.size());
  Entry gone = entries_[pos];
  *gone.slot = kAbsent;
  const Entry last = entries_.back();
  entries_.pop_back();
  if (pos == entries_.size()) return;  // it was the last one
  place(pos, last);
  if (before(last, gone)) {
    sift_up(pos);
  } else {
    sift_down(pos);
  }
}

DeadlineHeap::Entry DeadlineHeap::pop() {
  const Entry first = top();
  erase(0);
  return first;
}

void DeadlineHeap::sift_up(std::size_t pos) {
  const Entry e = entries_[pos];
  while (pos > 0) {
    const std::size_t parent = (pos - 1) / 2;
    if (!before(e, entries_[parent])) break;
    place(pos, entries_[parent]);
    pos = parent;
  }
  place(pos, e);
}

void DeadlineHeap::sift_down(std::size_t pos) {
  const Entry e = entries_[pos];
  const std::size_t n = entries_.size();
  while (true) {
    std::size_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && before(entries_[child + 1], entries_[child])) ++child;
    if (!before(entries_[child], e)) break;
    place(pos, entries_[child]);
    pos = child;
  }
  place(pos, e);
}

}  // namespace leasehold::node
