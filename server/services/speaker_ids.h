// server/services/speaker_ids.h: the ids of the connections that speak for one
// session (WaitsAndPushes::speak_for), in 8 bytes.
//
// Why: one entry per live session (ten million in the capacity goal,
// docs/bench-results.md), and nearly every session has exactly one
// speaker, the connection
// that opened it. A std::vector per session was a 24-byte header plus a
// separate heap block; this keeps a single id inline and allocates a vector
// only when a second connection speaks for the session.
//
// How: one word. Even: the id shifted left by one (0 = none). Odd: a
// pointer to the std::vector of every id, with its low bit set (a vector
// is 8-byte aligned). Connection ids start at 1 and stay below 2^63
// (asserted).
// Ownership: owns the vector, if any. Movable, not copyable.
// Thread-safety: none (the server's loop thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/assert.h"

namespace leasehold::server {

class SpeakerIds {
 public:
  explicit SpeakerIds(std::uint64_t first) : word_(inline_word(first)) {}
  ~SpeakerIds() { delete all(); }
  SpeakerIds(SpeakerIds&& other) noexcept : word_(std::exchange(other.word_, 0)) {}
  SpeakerIds& operator=(SpeakerIds&& other) noexcept {
    if (this != &other) {
      delete all();
      word_ = std::exchange(other.word_, 0);
    }
    return *this;
  }
  SpeakerIds(const SpeakerIds&) = delete;
  SpeakerIds& operator=(const SpeakerIds&) = delete;

  bool contains(std::uint64_t id) const {
    if (const std::vector<std::uint64_t>* v = all()) return std::find(v->begin(), v->end(), id) != v->end();
    return id != 0 && word_ == inline_word(id);
  }

  // Adds `id` unless present; first drops every id for which
  // is_closed(id) is true (connections closed since they spoke).
  template <typename IsClosed>
  void add(std::uint64_t id, IsClosed is_closed) {
    if (contains(id)) return;
    if (std::vector<std::uint64_t>* v = all()) {
      std::erase_if(*v, is_closed);
      v->push_back(id);
      return;
    }
    const std::uint64_t first = word_ >> 1;
    if (first == 0 || is_closed(first)) {
      word_ = inline_word(id);
      return;
    }
    auto* v = new std::vector<std::uint64_t>{first, id};
    word_ = reinterpret_cast<std::uintptr_t>(v) | 1U;
  }

 private:
  static std::uint64_t inline_word(std::uint64_t id) {
    LEASEHOLD_ASSERT(id < (std::uint64_t{1} << 63), "connection id {} does not fit a speaker entry", id);
    return id << 1;
  }
  std::vector<std::uint64_t>* all() const {
    if ((word_ & 1U) == 0) return nullptr;
    return reinterpret_cast<std::vector<std::uint64_t>*>(static_cast<std::uintptr_t>(word_ & ~std::uint64_t{1}));
  }

  std::uint64_t word_ = 0;  // see "How" above
};

}  // namespace leasehold::server
