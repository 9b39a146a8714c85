// log/etcd_log_snapshot.cc: EtcdLog snapshots: local file, chunked copy in
// etcd, log prefix deletion and compaction (see etcd_log.h, SNAPSHOTS).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "log/etcd_log.h"
#include "log/etcd_log_state.h"
#include "log/log_format.h"
#include "log/snapshot_file.h"

namespace leasehold::log {

Status EtcdLog::do_save_snapshot(LogIndex index, const std::string& bytes) {
  // The local file only speeds up this node's restart; the etcd copy is the
  // cluster's and bounds etcd's log. A failed or full local disk must not
  // stop the primary from publishing it (etcd would grow until its quota).
  Status local = write_snapshot_file(options_.local_dir, index, bytes);
  if (local) {
    if (auto files = list_snapshot_files(options_.local_dir, true)) {
      for (const SnapshotFileName& f : *files) {
        if (f.index < index) std::remove(f.path.c_str());
      }
    }
  }
  const std::optional<etcd::QueueKey> mine = term();
  if (!local) {
    spdlog::error("snapshot at index {}: the local file failed{} error=\"{}\"", index,
                  mine ? "; storing it in etcd only" : "", local.to_string());
  }
  if (mine) {
    if (Status st = store_snapshot_in_etcd(index, bytes, *mine); !st) return st;
    std::lock_guard lock(state_->mu);
    state_->position.snapshot = std::max(state_->position.snapshot, index);
  }
  return local;
}

Status EtcdLog::store_snapshot_in_etcd(LogIndex index, const std::string& bytes, const etcd::QueueKey& mine) {
  etcd::Client& client = *options_.client;
  const std::size_t chunk = options_.snapshot_chunk_bytes;
  const std::size_t count = (bytes.size() + chunk - 1) / chunk;
  if (count > kEtcdMaxSnapshotChunks) return Status(ErrorCode::kLimitExceeded, "snapshot too large for etcd");
  for (std::size_t n = 0; n < count; ++n) {
    auto put = client.put(etcd_snapshot_chunk_key(options_.prefix, index, static_cast<std::uint32_t>(n)),
                          std::string_view(bytes).substr(n * chunk, chunk));
    if (!put) return put.status();
  }
  const std::string meta = encode_etcd_snapshot_meta(
      EtcdSnapshotMeta{index, static_cast<std::uint32_t>(count), bytes.size(), crc32_update(0, bytes)});
  auto txn = client.txn({etcd::still_owned(mine)}, {etcd::TxnOp::put(meta_key(options_.prefix), meta)});
  if (!txn) return txn.status();
  if (!txn->succeeded) {
    return Status(ErrorCode::kConflict, "deposed: snapshot at " + std::to_string(index) + " not published");
  }
  // Older chunk sets, then the log prefix the snapshot covers.
  const std::string snap_root = std::string(options_.prefix) + "/snap/0";
  if (auto d = client.delete_range(snap_root, etcd_snapshot_chunks_prefix(options_.prefix, index)); !d) return d.status();
  if (auto d = client.delete_range(log_key(options_.prefix, 0), log_key(options_.prefix, index + 1)); !d) {
    return d.status();
  }
  std::int64_t compact_at = 0;
  {
    std::lock_guard lock(state_->mu);
    compact_at = state_->last_meta_revision;
    state_->last_meta_revision = txn->revision;
    state_->position.first = index + 1;
  }
  if (compact_at > 0) {
    auto c = client.compact(compact_at);
    if (!c && c.status().message().find("compacted") == std::string::npos) {
      spdlog::warn("etcd compaction at revision {} failed error=\"{}\"", compact_at, c.status().to_string());
    }
  }
  spdlog::info("snapshot stored in etcd index={} bytes={} chunks={} compacted_at={}", index, bytes.size(), count,
               compact_at);
  return Status::ok();
}

void EtcdLog::save_snapshot(LogIndex index, std::string bytes, StatusDone done) {
  const Position pos = position();
  if (index > pos.last || index <= pos.snapshot) {
    worker_->post([done = std::move(done), index] {
      if (done) done(Status(ErrorCode::kInvalidArgument, "bad snapshot index " + std::to_string(index)));
    });
    return;
  }
  worker_->post([this, index, bytes = std::move(bytes), done = std::move(done)] {
    Status st = do_save_snapshot(index, bytes);
    if (st) {
      std::lock_guard lock(state_->mu);
      state_->position.snapshot = std::max(state_->position.snapshot, index);
    }
    if (done) done(st);
  });
}

Result<std::optional<Snapshot>> EtcdLog::load_etcd_snapshot(LogIndex newer_than) {
  auto meta = options_.client->range(meta_key(options_.prefix));
  if (!meta) return meta.status();
  return read_etcd_snapshot(*meta, newer_than);
}

Result<std::optional<Snapshot>> EtcdLog::read_etcd_snapshot(const etcd::RangeResult& meta, LogIndex newer_than) {
  etcd::Client& client = *options_.client;
  if (meta.kvs.empty()) return std::optional<Snapshot>{};
  auto decoded = decode_etcd_snapshot_meta(meta.kvs.front().value, meta_key(options_.prefix));
  if (!decoded) return decoded.status();
  const LogIndex index = decoded->index;
  if (index <= newer_than) return std::optional<Snapshot>{};
  const std::string p = etcd_snapshot_chunks_prefix(options_.prefix, index);
  EtcdSnapshotAssembler assembler(options_.prefix, *decoded);
  std::string start = p;
  for (;;) {
    etcd::RangeOptions ro;
    ro.revision = meta.revision;
    ro.limit = 8;
    auto r = client.range(start, etcd::prefix_end(p), ro);
    if (!r) return r.status();
    for (const etcd::KeyValue& kv : r->kvs) {
      if (Status st = assembler.add(kv.key, kv.value); !st) return st;
    }
    if (!r->more || r->kvs.empty()) break;
    start = r->kvs.back().key + '\0';
  }
  auto snap = assembler.finish();
  if (!snap) return snap.status();
  return std::optional<Snapshot>(std::move(snap).value());
}

Result<EtcdCatchUp> EtcdLog::read_catch_up(std::size_t max_entries) {
  auto meta = options_.client->range(meta_key(options_.prefix));
  if (!meta) return meta.status();
  auto snapshot = read_etcd_snapshot(*meta, 0);
  if (!snapshot) return snapshot.status();
  EtcdCatchUp out;
  out.revision = meta->revision;
  if (snapshot->has_value()) {
    out.snapshot_index = (*snapshot)->index;
    out.snapshot_bytes = std::move((*snapshot)->bytes);
  }
  std::int64_t read_at = 0;
  LogIndex last = 0;
  Status st = read_entries(out.snapshot_index + 1, out.revision,
                           [&](LogIndex index, std::string_view batch) {
                             if (out.entries.size() >= max_entries) {
                               return Status(ErrorCode::kLimitExceeded,
                                             "more than " + std::to_string(max_entries) +
                                                 " etcd log entries after the snapshot");
                             }
                             out.entries.emplace_back(index, std::string(batch));
                             return Status::ok();
                           },
                           &read_at, &last);
  if (!st) return st;
  std::lock_guard lock(state_->mu);
  state_->position.snapshot = std::max(state_->position.snapshot, out.snapshot_index);
  state_->position.last = std::max(state_->position.last, std::max(last, out.snapshot_index));
  if (!out.entries.empty() && state_->position.first == 0) state_->position.first = out.entries.front().first;
  return out;
}

Result<std::optional<Snapshot>> EtcdLog::load_snapshot() {
  std::optional<Snapshot> best;
  auto files = list_snapshot_files(options_.local_dir, true);
  if (!files) return files.status();
  if (!files->empty()) {
    auto local = read_snapshot_file(files->back().path, files->back().index);
    if (!local) return local.status();
    best = std::move(local).value();
  }
  auto remote = load_etcd_snapshot(best ? best->index : 0);
  if (!remote) return remote.status();
  if (remote->has_value()) best = std::move(*remote);
  if (best) {
    std::lock_guard lock(state_->mu);
    state_->position.snapshot = best->index;
    state_->position.last = std::max(state_->position.last, best->index);
  }
  return best;
}

}  // namespace leasehold::log
