#include "log/log_format.h"

#include <zlib.h>

#include <cstdio>

namespace leasehold::log {

std::string encode_entry_key(LogIndex index) {
  std::string key(kEntryKeyBytes, '\0');
  for (std::size_t i = 0; i < kEntryKeyBytes; ++i) {
    key[kEntryKeyBytes - 1 - i] = static_cast<char>((index >> (8 * i)) & 0xff);
  }
  return key;
}

Result<LogIndex> decode_entry_key(std::string_view key) {
  if (key.size() != kEntryKeyBytes) {
    return Status(ErrorCode::kCorruption,
                  "log key of " + std::to_string(key.size()) + " bytes (expected 8)");
  }
  LogIndex index = 0;
  for (char c : key) index = (index << 8) | static_cast<unsigned char>(c);
  return index;
}

std::string describe_entry(LogIndex index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "entry %llu (key 0x%016llx)",
                static_cast<unsigned long long>(index), static_cast<unsigned long long>(index));
  return buf;
}

std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes) {
  // zlib takes uInt lengths; feed large inputs in chunks.
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  std::size_t left = bytes.size();
  uLong c = crc;
  while (left > 0) {
    const uInt chunk = left > (1u << 30) ? (1u << 30) : static_cast<uInt>(left);
    c = ::crc32(c, data, chunk);
    data += chunk;
    left -= chunk;
  }
  return static_cast<std::uint32_t>(c);
}

void put_u32_le(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64_le(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32_le(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  return v;
}

std::uint64_t get_u64_le(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[static_cast<std::size_t>(i)]);
  return v;
}

namespace {
std::uint32_t entry_crc(LogIndex index, std::string_view payload) {
  const std::string key = encode_entry_key(index);
  return crc32_update(crc32_update(0, key), payload);
}
}  // namespace

std::string encode_entry_value(LogIndex index, std::string_view payload) {
  std::string value;
  value.reserve(kEntryHeaderBytes + payload.size());
  value.push_back(static_cast<char>(kEntryFormat));
  put_u32_le(value, entry_crc(index, payload));
  value.append(payload);
  return value;
}

Result<std::string_view> decode_entry_value(LogIndex index, std::string_view value) {
  if (value.size() < kEntryHeaderBytes) {
    return Status(ErrorCode::kCorruption, describe_entry(index) + ": value of " +
                                              std::to_string(value.size()) + " bytes is too short");
  }
  if (static_cast<std::uint8_t>(value[0]) != kEntryFormat) {
    return Status(ErrorCode::kCorruption,
                  describe_entry(index) + ": unknown format byte " +
                      std::to_string(static_cast<unsigned char>(value[0])));
  }
  const std::uint32_t stored = get_u32_le(value.substr(1, 4));
  const std::string_view payload = value.substr(kEntryHeaderBytes);
  if (stored != entry_crc(index, payload)) {
    return Status(ErrorCode::kCorruption, describe_entry(index) + ": checksum mismatch");
  }
  return payload;
}

}  // namespace leasehold::log
