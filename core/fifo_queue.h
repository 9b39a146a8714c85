// core/fifo_queue.h: a FIFO sequence that pops from the front in O(1)
// amortised, for a lock's waiters (core/state.h).
//
// A std::vector with a head offset: elements live in [head, end). Erasing a
// prefix (the granted waiters) only advances the head; the dead prefix is
// dropped when it is at least half the storage (and at once when the queue
// empties), so the storage stays within 2x the live elements (plus the
// capacity a std::vector keeps) and draining n waiters one grant at a time
// costs O(n), not O(n^2) element moves. Erasing from the middle (a cancelled
// or expired wait) is a vector erase.
//
// Iterators, references and indices are invalidated by every erase and
// push_back (like std::vector's, but also for erasing the front).
// Thread-safety: none (a value type, like std::vector).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace leasehold::core::detail {

template <typename T>
class FifoQueue {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  iterator begin() { return items_.begin() + offset(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + offset(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size() - head_; }
  bool empty() const { return size() == 0; }
  T& operator[](std::size_t i) { return items_[head_ + i]; }
  const T& operator[](std::size_t i) const { return items_[head_ + i]; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }

  void push_back(T value) { items_.push_back(std::move(value)); }

  // Erases [first, last); returns the iterator to the element after them.
  iterator erase(const_iterator first, const_iterator last) {
    if (first == begin()) {
      head_ += static_cast<std::size_t>(last - first);
      compact();
      return begin();
    }
    return items_.erase(first, last);
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

 private:
  std::ptrdiff_t offset() const { return static_cast<std::ptrdiff_t>(head_); }
  void compact() {
    if (head_ == items_.size()) {
      items_.clear();  // keeps the capacity, as std::vector's erase would
      head_ = 0;
    } else if (head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + offset());
      head_ = 0;
    }
  }

  std::vector<T> items_;
  std::size_t head_ = 0;  // items_[0, head_) are erased
};

}  // namespace leasehold::core::detail
