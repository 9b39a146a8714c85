// log/etcd_log_format.h: the bytes of the etcd log's keys and values (layout
// in log/etcd_log.h), as pure functions without an etcd client, so that the
// decoders can be unit-tested and fuzzed alone (fuzz/etcd_log_fuzzer.cc).
//
// Every decoder treats its input as hostile: a malformed key is nullopt, a
// malformed value is kCorruption, and nothing is allocated from a claimed
// length before the bytes are there.
//
// Thread-safety: pure functions; an EtcdSnapshotAssembler has one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "log/log.h"

namespace leasehold::log {

// --- log entries: P/log/<20-digit index> = "LHE1" + term (8, LE) + batch ---
inline constexpr std::string_view kEtcdEntryMagic = "LHE1";
inline constexpr std::size_t kEtcdEntryHeaderBytes = 4 + 8;

// A 20-digit zero-padded decimal (every uint64 fits).
std::string digits20(std::uint64_t n);
std::string etcd_log_prefix(std::string_view prefix);  // "P/log/"
std::string etcd_log_key(std::string_view prefix, LogIndex index);
// The index of a log key; nullopt unless `key` is exactly what etcd_log_key()
// makes for some index (20 digits, no overflow).
std::optional<LogIndex> parse_etcd_log_key(std::string_view prefix, std::string_view key);

std::string encode_etcd_entry(std::int64_t term, std::string_view batch);
// The batch inside a stored entry (a view into `value`). kCorruption on a
// short value or a bad magic.
Result<std::string_view> etcd_entry_batch(std::string_view value);

// --- snapshots: P/snap/meta and P/snap/<20-digit index>/<6-digit n> ---------
inline constexpr std::string_view kEtcdSnapshotMagic = "LHS1";
inline constexpr std::size_t kEtcdSnapshotMetaBytes = 4 + 8 + 4 + 8 + 4;
inline constexpr std::uint32_t kEtcdMaxSnapshotChunks = 1U << 20;

struct EtcdSnapshotMeta {
  LogIndex index = 0;
  std::uint32_t chunks = 0;
  std::uint64_t total_bytes = 0;
  std::uint32_t crc = 0;  // zlib crc32 of the whole snapshot
};

std::string meta_key(std::string_view prefix);  // "P/snap/meta"
std::string etcd_snapshot_chunks_prefix(std::string_view prefix, LogIndex index);  // "P/snap/<index>/"
std::string etcd_snapshot_chunk_key(std::string_view prefix, LogIndex index, std::uint32_t n);

std::string encode_etcd_snapshot_meta(const EtcdSnapshotMeta& meta);
// kCorruption naming `key` on a wrong length, bad magic or more than
// kEtcdMaxSnapshotChunks chunks.
Result<EtcdSnapshotMeta> decode_etcd_snapshot_meta(std::string_view value, std::string_view key);

// Rebuilds a snapshot from its chunks, fed in key order as etcd returns them.
// add() is kCorruption for a chunk out of order, beyond the meta's count, or
// beyond its total length (so a hostile store cannot make it grow past the
// meta's claim); finish() is kCorruption unless the count, the length and the
// crc32 all match. After an error the assembler must not be used again.
class EtcdSnapshotAssembler {
 public:
  EtcdSnapshotAssembler(std::string_view prefix, const EtcdSnapshotMeta& meta);
  Status add(std::string_view key, std::string_view value);
  Result<Snapshot> finish();

 private:
  std::string prefix_;
  EtcdSnapshotMeta meta_;
  std::uint32_t seen_ = 0;
  std::string bytes_;
};

}  // namespace leasehold::log
