// log/rocksdb_log.h: the embedded log: RocksDB on local disk, fsync per append.
//
// On-disk layout under options.dir:
//   rocksdb/                      the RocksDB database holding the entries
//                                 (key/value format: log/log_format.h)
//   snapshot-<20 digits>.bin      the latest snapshot (log/snapshot_file.h)
//
// Durability: each append is one RocksDB write with WriteOptions::sync, so
// it is in the fsynced WAL before its callback reports success.
//
// Recovery at open():
//  - RocksDB replays its WAL with WALRecoveryMode::kTolerateCorruptedTailRecords:
//    an incomplete record at the END of the WAL (a write torn by a crash,
//    therefore never acknowledged) is dropped; damage anywhere else fails
//    the open instead of silently dropping acknowledged writes after it
//    (which kPointInTimeRecovery would do).
//  - every stored entry is checked: its checksum, and that indices are
//    contiguous and continue the snapshot. Any failure: kCorruption naming
//    the entry key or the file; open() fails and nothing is repaired.
//  - the newest snapshot file is verified (kCorruption naming it). Older
//    snapshot files and stray .tmp files are removed.
//
// Thread-safety and callbacks: see log/log.h. One writer thread per log
// performs appends and snapshot saves in order and runs their callbacks.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "log/log.h"

namespace leasehold::log {

struct RocksLogOptions {
  std::string dir;                              // created if missing
  std::size_t max_entry_bytes = 64u << 20;      // larger appends: kLimitExceeded
  // Called on the log's thread after each synced append write with its
  // duration (metrics: server/metrics.h). Must be thread-safe; may be empty.
  std::function<void(std::chrono::steady_clock::duration)> on_synced_write{};
};

// Opens (or creates) the embedded log in options.dir.
// Errors: kIoError (cannot create/open), kCorruption (see above).
Result<std::unique_ptr<Log>> open_rocksdb_log(const RocksLogOptions& options);

}  // namespace leasehold::log
