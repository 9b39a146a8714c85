// log/snapshot_file.h: snapshot files of the embedded log.
//
// A snapshot lives in <dir>/snapshot-<index, 20 digits>.bin:
//   [8 bytes magic "LHSNAP01"][8 bytes index LE][8 bytes length LE]
//   [4 bytes crc32 LE of (index bytes, length bytes, payload)][payload]
// It is written to "<name>.tmp", fsynced, renamed into place, and the
// directory fsynced, so a crash leaves either the old or the new snapshot
// (plus at most a stray .tmp, removed on open).
//
// SnapshotFileWriter writes the same file from pieces that arrive over time
// (so the image is never whole in memory): the payload goes to the .tmp
// behind a header left blank, and finish() fills in the header, whose length
// and checksum are known only then (the checksum of the payload is combined
// with that of the header fields: zlib's crc32_combine).
//
// Errors name the file. Thread-safety: free functions on distinct files; a
// SnapshotFileWriter is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
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

// Writes snapshot <index> in <dir> piece by piece. Ownership: owns the .tmp
// file until finish() renames it; destroying an unfinished writer (or one
// whose finish() failed) closes and removes the .tmp.
class SnapshotFileWriter {
 public:
  // Creates "<snapshot_path>.tmp". kIoError naming it.
  static Result<std::unique_ptr<SnapshotFileWriter>> create(const std::string& dir, LogIndex index);
  ~SnapshotFileWriter();
  SnapshotFileWriter(const SnapshotFileWriter&) = delete;
  SnapshotFileWriter& operator=(const SnapshotFileWriter&) = delete;

  // Appends the next bytes of the payload. kIoError naming the .tmp; after
  // an error every later call fails too.
  Status append(std::string_view bytes);
  // Writes the header, fsyncs, renames into place and fsyncs the directory:
  // the same file write_snapshot_file() writes for the concatenated pieces.
  // kIoError naming the file.
  Status finish();
  std::uint64_t payload_bytes() const { return length_; }

 private:
  SnapshotFileWriter(std::string path, LogIndex index, int fd);

  std::string path_;  // the final name; the .tmp is path_ + ".tmp"
  LogIndex index_;
  int fd_;
  std::uint64_t length_ = 0;
  std::uint32_t payload_crc_ = 0;
  Status failed_;
};

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
