// common/lazy_vector.h: a std::vector that costs one pointer while empty.
//
// Why: a container per element of a large table (each session's list of
// the locks it holds or waits for) is empty for most elements. A
// std::vector is 24 bytes even then; this is 8, and the vector is allocated
// on the first push_back. Once allocated it stays (a session that locks
// once usually locks again) until take() or destruction.
//
// Interface: the subset of std::vector the project uses; iterators are T*
// into the vector and are invalidated as std::vector's are.
// Errors: allocation failures throw std::bad_alloc.
// Ownership: owns its elements. Movable, not copyable.
// Thread-safety: none; one owner.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace leasehold {

template <typename T>
class LazyVector {
 public:
  LazyVector() = default;
  LazyVector(LazyVector&&) noexcept = default;
  LazyVector& operator=(LazyVector&&) noexcept = default;
  LazyVector(const LazyVector&) = delete;
  LazyVector& operator=(const LazyVector&) = delete;

  void push_back(T value) {
    if (!v_) v_ = std::make_unique<std::vector<T>>();
    v_->push_back(std::move(value));
  }
  // Precondition: !empty().
  void pop_back() { v_->pop_back(); }
  T& back() { return v_->back(); }

  bool empty() const { return !v_ || v_->empty(); }
  std::size_t size() const { return v_ ? v_->size() : 0; }

  T* begin() { return v_ ? v_->data() : nullptr; }
  T* end() { return v_ ? v_->data() + v_->size() : nullptr; }
  const T* begin() const { return v_ ? v_->data() : nullptr; }
  const T* end() const { return v_ ? v_->data() + v_->size() : nullptr; }

  // Moves the elements out; leaves this empty (and unallocated).
  std::vector<T> take() {
    std::vector<T> out;
    if (v_) out = std::move(*v_);
    v_.reset();
    return out;
  }

 private:
  std::unique_ptr<std::vector<T>> v_;  // null until the first push_back
};

}  // namespace leasehold
