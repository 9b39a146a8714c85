// log/revision_record.h: the durable revision record of the embedded log.
//
// The record lives OUTSIDE the log (DESIGN.md section 6), so that a log that
// lost data (a truncated or deleted RocksDB WAL, a restored old copy) cannot
// hide it: the node compares the log with the record at every start
// (node/revision_guard.h).
//
// Contents (all revisions are state machine revisions = fencing tokens):
//   reserved_through  no revision above this was ever handed out: the node
//                     rewrites the record BEFORE it appends a batch that
//                     could reach past it (a block at a time)
//   durable_revision  a revision the log held durably when the record was
//                     written (the log can never end below it)
//   max_ttl_ms        the longest session TTL ever acknowledged (the length
//                     of a quarantine that outlasts every holder's lease)
//   clean_revision    with `clean`: the log's exact last revision at a clean
//                     shutdown (the next start must find exactly it)
//   lease             the node acknowledged commands before they were durable
//                     (`--durability lease`) since the record was written: an
//                     unclean stop then needs a quarantine, whatever mode the
//                     next start uses
//
// Files: <dir>/revision-record.a and <dir>/revision-record.b hold the same
// record; store() replaces a, then b, each durably (log/durable_file.h). A
// crash or outside damage leaves at least one valid copy of a record that
// bounds every revision handed out, unless both were damaged.
// Format (little-endian): "LHREV001" | u64 reserved_through | u64
// durable_revision | u64 max_ttl_ms | u64 clean_revision | u8 flags (1 clean,
// 2 lease) | u32 crc32 of everything before it.
//
// Thread-safety: free functions; one writer per directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::log {

struct RevisionRecord {
  std::uint64_t reserved_through = 0;
  std::uint64_t durable_revision = 0;
  std::uint64_t max_ttl_ms = 0;
  std::uint64_t clean_revision = 0;
  bool clean = false;
  bool lease = false;
  friend bool operator==(const RevisionRecord&, const RevisionRecord&) = default;
};

// What load_revision_record() found.
struct LoadedRevisionRecord {
  enum class State : std::uint8_t {
    kAbsent,   // neither file exists (a new data dir, or both deleted)
    kValid,    // `record` is the newest valid copy
    kCorrupt,  // files exist but none is valid
  };
  State state = State::kAbsent;
  RevisionRecord record;
  std::string where;                  // "<dir>/revision-record.{a,b}", for messages
  std::vector<std::string> problems;  // one line per missing or damaged copy
};

// The two paths, for messages and tests.
std::string revision_record_path_a(const std::string& dir);
std::string revision_record_path_b(const std::string& dir);

// Reads both copies and keeps the valid one with the highest
// reserved_through (ties: the one written later, copy b). Errors: kIoError
// when a file exists but cannot be read (a damaged copy is not an error: it
// is reported in `problems`, or as kCorrupt when both are damaged).
Result<LoadedRevisionRecord> load_revision_record(const std::string& dir);

// Writes `record` durably to both copies (a first, then b). kIoError naming
// the file; after an error the caller must not hand out revisions the new
// record was to reserve.
Status store_revision_record(const std::string& dir, const RevisionRecord& record);

// Encoding, exposed for tests and the fuzz targets.
std::string encode_revision_record(const RevisionRecord& record);
// kCorruption (naming nothing: the caller adds the file) on any bad byte.
Result<RevisionRecord> decode_revision_record(std::string_view bytes);

}  // namespace leasehold::log
