// log/log_format.h: how the embedded log stores one entry in RocksDB.
//
// Key:   the entry's index as 8 bytes, big-endian (so RocksDB's bytewise
//        order is index order).
// Value: [1 byte format = 1][4 bytes crc32, little-endian][payload]
//        where crc32 (zlib) covers the 8 key bytes followed by the payload,
//        so a value that is damaged, or found under the wrong key, fails.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "log/log.h"

namespace leasehold::log {

inline constexpr std::size_t kEntryKeyBytes = 8;
inline constexpr std::size_t kEntryHeaderBytes = 5;
inline constexpr std::uint8_t kEntryFormat = 1;

std::string encode_entry_key(LogIndex index);
// kCorruption when the key is not 8 bytes.
Result<LogIndex> decode_entry_key(std::string_view key);

std::string encode_entry_value(LogIndex index, std::string_view payload);
// The payload inside `value` (a view into it). kCorruption naming the entry
// ("entry 7 (key 0x0000000000000007): checksum mismatch") on a short value,
// an unknown format byte or a checksum mismatch.
Result<std::string_view> decode_entry_value(LogIndex index, std::string_view value);

// "entry 7 (key 0x0000000000000007)", for error messages.
std::string describe_entry(LogIndex index);

// zlib crc32 over `bytes`, continuing from `crc` (start with 0).
std::uint32_t crc32_update(std::uint32_t crc, std::string_view bytes);

void put_u32_le(std::string& out, std::uint32_t v);
void put_u64_le(std::string& out, std::uint64_t v);
std::uint32_t get_u32_le(std::string_view in);  // in.size() >= 4
std::uint64_t get_u64_le(std::string_view in);  // in.size() >= 8

}  // namespace leasehold::log
