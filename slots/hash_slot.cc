#include "slots/hash_slot.h"

#include <array>

namespace leasehold::slots {
namespace {

// One entry per value of the high byte: the CRC register after shifting
// that byte through the polynomial eight times.
constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint16_t reg = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      reg = (reg & 0x8000U) != 0 ? static_cast<std::uint16_t>((reg << 1) ^ 0x1021U)
                                 : static_cast<std::uint16_t>(reg << 1);
    }
    table[byte] = reg;
  }
  return table;
}

constexpr std::array<std::uint16_t, 256> kTable = make_table();

}  // namespace

std::uint16_t crc16_xmodem(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (const char c : bytes) {
    const auto byte = static_cast<std::uint8_t>(c);
    crc = static_cast<std::uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ byte) & 0xFFU]);
  }
  return crc;
}

std::string_view hashed_part(std::string_view name) {
  const std::size_t open = name.find('{');
  if (open == std::string_view::npos) return name;
  const std::size_t close = name.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return name;
  return name.substr(open + 1, close - open - 1);
}

Slot hash_slot(std::string_view name) {
  return static_cast<Slot>(crc16_xmodem(hashed_part(name)) % kSlotCount);
}

}  // namespace leasehold::slots
