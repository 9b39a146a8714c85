// slots/hash_slot.h: the hash slot of a lock or key name, bit for bit the
// slot Redis Cluster gives the same bytes, so Redis Cluster clients route
// leasehold names by themselves (DESIGN.md section 7).
//
// The slot is CRC16-XMODEM(hashed part) mod 16384. The hashed part is the
// whole name, unless the name holds a hash tag: the bytes between the first
// '{' and the first '}' after it, when there is at least one byte between
// them. `lock{user:7}` and `fence{user:7}` therefore share a slot, and a
// fenced key is put in its lock's slot by tagging both names alike.
//
// Pure functions of their input; no errors; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace leasehold::slots {

using Slot = std::uint16_t;

inline constexpr std::uint32_t kSlotCount = 16384;

// CRC16 with polynomial 0x1021, initial value 0, no reflection, no final
// xor (the XMODEM variant; "123456789" gives 0x31C3).
std::uint16_t crc16_xmodem(std::string_view bytes);

// The part of `name` that is hashed: its hash tag, or the whole name.
std::string_view hashed_part(std::string_view name);

// The slot of `name`, in [0, kSlotCount).
Slot hash_slot(std::string_view name);

}  // namespace leasehold::slots
