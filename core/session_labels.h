// core/session_labels.h: a session's owner and user names in one pointer.
//
// Why: most sessions have neither (no owner given, no authentication), and
// two std::string members cost 64 bytes per session even then; at ten
// million sessions that alone was 640 MB. This is 8 bytes, null when both
// are empty, else one heap block holding both lengths and both names.
//
// Errors: construction throws std::bad_alloc like std::string; a name over
// 4 GiB is a broken invariant (the state machine's limits are far below:
// max_owner_bytes) and stops the process.
// Ownership: owns its block. Movable, not copyable.
// Thread-safety: none; immutable after construction.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "common/assert.h"

namespace leasehold::core::detail {

class SessionLabels {
 public:
  SessionLabels() = default;
  SessionLabels(std::string_view owner, std::string_view user) {
    if (owner.empty() && user.empty()) return;
    constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
    LEASEHOLD_ASSERT(owner.size() <= kMax && user.size() <= kMax, "session labels of {} and {} bytes", owner.size(),
                     user.size());
    const Lengths lengths{static_cast<std::uint32_t>(owner.size()), static_cast<std::uint32_t>(user.size())};
    block_ = std::make_unique_for_overwrite<char[]>(sizeof(Lengths) + owner.size() + user.size());
    std::memcpy(block_.get(), &lengths, sizeof(Lengths));
    if (!owner.empty()) std::memcpy(block_.get() + sizeof(Lengths), owner.data(), owner.size());
    if (!user.empty()) std::memcpy(block_.get() + sizeof(Lengths) + owner.size(), user.data(), user.size());
  }

  std::string_view owner() const {
    if (!block_) return {};
    return {block_.get() + sizeof(Lengths), lengths().owner};
  }
  std::string_view user() const {
    if (!block_) return {};
    const Lengths l = lengths();
    return {block_.get() + sizeof(Lengths) + l.owner, l.user};
  }

 private:
  struct Lengths {
    std::uint32_t owner;
    std::uint32_t user;
  };
  Lengths lengths() const {
    Lengths l{};
    std::memcpy(&l, block_.get(), sizeof(Lengths));
    return l;
  }

  std::unique_ptr<char[]> block_;  // Lengths, owner bytes, user bytes; null when both are empty
};

}  // namespace leasehold::core::detail
