// log/rocksdb_log.h: the embedded log: RocksDB on local disk, fsync per append.
//
// On-disk layout under options.dir:
//   rocksdb/                      the RocksDB database holding the entries
//                                 (key/value format: log/log_format.h)
//   journal                       the entry journal (log/entry_journal.h)
//   snapshot-<20 digits>.bin      the latest snapshot (log/snapshot_file.h)
//
// Durability: each append is first written to the journal and fdatasynced
// (one in-place write to a preallocated file), then put into RocksDB
// without a sync; its callback reports success after both. The journal
// holds every entry since RocksDB's WAL was last synced: when it is full,
// the writer syncs RocksDB's WAL (SyncWAL) and starts a new journal
// generation at the next index. An entry too large for an empty journal is
// written to RocksDB with a sync instead. A clean close syncs RocksDB's WAL
// and empties the journal the same way.
//
// Recovery at open():
//  - RocksDB replays its WAL with WALRecoveryMode::kPointInTimeRecovery: its
//    unsynced tail may be cut or torn anywhere after a power loss, and it
//    keeps the prefix before the first damage. A data dir without a journal
//    (made before the journal existed) is opened with
//    kTolerateCorruptedTailRecords instead, since every RocksDB write there
//    was synced: damage before the WAL's end then fails the open.
//  - every stored entry is checked: its checksum, and that indices are
//    contiguous and continue the snapshot. Any failure: kCorruption naming
//    the entry key or the file; open() fails and nothing is repaired.
//  - the journal is read (its own checks: log/entry_journal.h). Every entry
//    below its start index was durable in RocksDB, so RocksDB (or the
//    snapshot) must reach start index - 1; if it does not, acknowledged
//    entries were lost and open() fails with kCorruption saying which and
//    naming --recover-lost-log, unless options.accept_lost_entries (then it
//    logs the loss, ignores the journal's entries and goes on: the node's
//    revision guard, node/revision_guard.h, decides what follows). Journal
//    entries beyond RocksDB's last are written back into RocksDB, RocksDB's
//    WAL is synced, and the journal starts a new generation.
//  - the newest snapshot file is verified (kCorruption naming it). Older
//    snapshot files and stray .tmp files are removed.
//
// Thread-safety and callbacks: see log/log.h. One writer thread per log
// performs appends and snapshot saves in order and runs their callbacks.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "log/log.h"

namespace leasehold::log {

struct RocksLogOptions {
  std::string dir;                              // created if missing
  std::size_t max_entry_bytes = 64u << 20;      // larger appends: kLimitExceeded
  // Called on the log's thread after each synced append write with its
  // duration (metrics: server/observability/metrics.h). Must be thread-safe; may be empty.
  std::function<void(std::chrono::steady_clock::duration)> on_synced_write{};
  // Size of the journal when open() creates it (an existing one keeps its
  // size). Each append takes at least one 4 KiB block; when the journal is
  // full, the next append first syncs RocksDB's WAL.
  std::size_t journal_bytes = 4u << 20;
  // --recover-lost-log: a RocksDB that lost entries the journal shows were
  // durable is opened anyway (see Recovery above).
  bool accept_lost_entries = false;
};

// Opens (or creates) the embedded log in options.dir.
// Errors: kIoError (cannot create/open), kCorruption (see above).
Result<std::unique_ptr<Log>> open_rocksdb_log(const RocksLogOptions& options);

}  // namespace leasehold::log
