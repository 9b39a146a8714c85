// log/etcd_log_format.cc: keys and values of the etcd log (see etcd_log_format.h).
#include "log/etcd_log_format.h"

#include <cstdio>
#include <limits>

#include "log/log_format.h"

namespace leasehold::log {

std::string digits20(std::uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(n));
  return buf;
}

std::string etcd_log_prefix(std::string_view prefix) { return std::string(prefix) + "/log/"; }

std::string etcd_log_key(std::string_view prefix, LogIndex index) { return etcd_log_prefix(prefix) + digits20(index); }

std::optional<LogIndex> parse_etcd_log_key(std::string_view prefix, std::string_view key) {
  const std::string p = etcd_log_prefix(prefix);
  if (key.size() != p.size() + 20 || key.substr(0, p.size()) != p) return std::nullopt;
  constexpr LogIndex kMax = std::numeric_limits<LogIndex>::max();
  LogIndex n = 0;
  for (char c : key.substr(p.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<LogIndex>(c - '0');
    if (n > (kMax - digit) / 10) return std::nullopt;  // 20 digits can exceed 2^64 - 1
    n = n * 10 + digit;
  }
  return n;
}

std::string encode_etcd_entry(std::int64_t term, std::string_view batch) {
  std::string value(kEtcdEntryMagic);
  put_u64_le(value, static_cast<std::uint64_t>(term));
  value += batch;
  return value;
}

Result<std::string_view> etcd_entry_batch(std::string_view value) {
  if (value.size() < kEtcdEntryHeaderBytes || value.substr(0, 4) != kEtcdEntryMagic) {
    return Status(ErrorCode::kCorruption, "log entry has a bad header");
  }
  return value.substr(kEtcdEntryHeaderBytes);
}

std::string meta_key(std::string_view prefix) { return std::string(prefix) + "/snap/meta"; }

std::string etcd_snapshot_chunks_prefix(std::string_view prefix, LogIndex index) {
  return std::string(prefix) + "/snap/" + digits20(index) + "/";
}

std::string etcd_snapshot_chunk_key(std::string_view prefix, LogIndex index, std::uint32_t n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06u", n);
  return etcd_snapshot_chunks_prefix(prefix, index) + buf;
}

std::string encode_etcd_snapshot_meta(const EtcdSnapshotMeta& meta) {
  std::string out(kEtcdSnapshotMagic);
  put_u64_le(out, meta.index);
  put_u32_le(out, meta.chunks);
  put_u64_le(out, meta.total_bytes);
  put_u32_le(out, meta.crc);
  return out;
}

Result<EtcdSnapshotMeta> decode_etcd_snapshot_meta(std::string_view value, std::string_view key) {
  if (value.size() != kEtcdSnapshotMetaBytes || value.substr(0, 4) != kEtcdSnapshotMagic) {
    return Status(ErrorCode::kCorruption, "etcd snapshot meta " + std::string(key) + " is malformed");
  }
  EtcdSnapshotMeta meta;
  meta.index = get_u64_le(value.substr(4));
  meta.chunks = get_u32_le(value.substr(12));
  meta.total_bytes = get_u64_le(value.substr(16));
  meta.crc = get_u32_le(value.substr(24));
  if (meta.chunks > kEtcdMaxSnapshotChunks) {
    return Status(ErrorCode::kCorruption, "etcd snapshot meta " + std::string(key) + " claims too many chunks");
  }
  return meta;
}

EtcdSnapshotAssembler::EtcdSnapshotAssembler(std::string_view prefix, const EtcdSnapshotMeta& meta)
    : prefix_(prefix), meta_(meta) {}

Status EtcdSnapshotAssembler::add(std::string_view key, std::string_view value) {
  const std::string what = "etcd snapshot " + std::to_string(meta_.index);
  if (seen_ >= meta_.chunks || key != etcd_snapshot_chunk_key(prefix_, meta_.index, seen_)) {
    return Status(ErrorCode::kCorruption, what + ": chunk " + std::string(key) + " out of order");
  }
  if (value.size() > meta_.total_bytes - bytes_.size()) {
    return Status(ErrorCode::kCorruption, what + ": chunks longer than the meta's " +
                                              std::to_string(meta_.total_bytes) + " bytes");
  }
  bytes_ += value;
  ++seen_;
  return Status::ok();
}

Result<Snapshot> EtcdSnapshotAssembler::finish() {
  if (seen_ != meta_.chunks || bytes_.size() != meta_.total_bytes || crc32_update(0, bytes_) != meta_.crc) {
    return Status(ErrorCode::kCorruption, "etcd snapshot " + std::to_string(meta_.index) +
                                              " failed its check (chunks, length or crc32)");
  }
  Snapshot snap;
  snap.index = meta_.index;
  snap.bytes = std::move(bytes_);
  return snap;
}

}  // namespace leasehold::log
