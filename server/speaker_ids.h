// server/speaker_ids.h: the ids of the connections that speak for one
// session (Server::speak_for), in 16 bytes.
//
// Why: one entry per live session, and nearly every session has exactly one
// speaker, the connection that opened it. A std::vector per session was a
// 24-byte header plus a separate heap block; this keeps the first id inline
// and allocates only for a second speaker.
//
// Ids are connection ids, which start at 1 (0 marks "none").
// Ownership: a value type; movable, not copyable.
// Thread-safety: none (the server's loop thread).
#pragma once

#include <cstdint>
#include <vector>

#include "common/lazy_vector.h"

namespace leasehold::server {

class SpeakerIds {
 public:
  explicit SpeakerIds(std::uint64_t first) : first_(first) {}

  bool contains(std::uint64_t id) const {
    if (id == first_) return id != 0;
    for (std::uint64_t other : more_) {
      if (other == id) return true;
    }
    return false;
  }

  // Adds `id` unless present; first drops every id for which
  // is_closed(id) is true (connections closed since they spoke).
  template <typename IsClosed>
  void add(std::uint64_t id, IsClosed is_closed) {
    if (contains(id)) return;
    if (first_ != 0 && is_closed(first_)) first_ = 0;
    if (!more_.empty()) {
      for (std::uint64_t other : more_.take()) {
        if (!is_closed(other)) more_.push_back(other);
      }
    }
    if (first_ == 0) {
      first_ = id;
    } else {
      more_.push_back(id);
    }
  }

 private:
  std::uint64_t first_ = 0;
  LazyVector<std::uint64_t> more_;  // speakers after the first, rarely any
};

}  // namespace leasehold::server
