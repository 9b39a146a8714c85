// log/snapshot_file.h: snapshot files of the embedded log.
//
// A snapshot lives in <dir>/snapshot-<index, 20 digits>.bin:
//   [8 bytes magic "LHSNAP01"][8 bytes index LE][8 bytes length LE]
//   [4 bytes crc32 LE of (index bytes, length bytes, payload)][payload]
// It is written to "<name>.tmp", fsynced, renamed into place, and the
// directory fsynced, so a crash leaves either the old or the new snapshot
// (plus at most a stray .tmp, removed on open).
//
// Errors name the file. Thread-safety: free functions on distinct files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "log/durable_file.h"  // sync_directory
#include "log/log.h"

namespace leasehold::log {

// "<dir>/snapshot-00000000000000000042.bin"
std::string snapshot_path(const std::string& dir, LogIndex index);

// Writes the snapshot durably (see above). kIoError naming the file.
Status write_snapshot_file(const std::string& dir, LogIndex index, std::string_view bytes);

// Reads and verifies one snapshot file; `expected_index` is the index in its
// name. kCorruption naming the file on a bad magic, length, index or checksum;
// kIoError when it cannot be read.
Result<Snapshot> read_snapshot_file(const std::string& path, LogIndex expected_index);

struct SnapshotFileName {
  LogIndex index = 0;
  std::string path;
};
// Snapshot files in `dir`, lowest index first; also removes stray "*.tmp"
// snapshot files when `remove_temp` is set. kIoError if `dir` cannot be listed.
Result<std::vector<SnapshotFileName>> list_snapshot_files(const std::string& dir, bool remove_temp);

}  // namespace leasehold::log
