// log/entry_journal.h: the embedded log's synced write path. Log entries go
// into one preallocated file that is written in place, so that making an
// entry durable costs one data write and one fdatasync, and never a change
// of the file's size or extents (which an appended RocksDB WAL record needs:
// 0.15-0.21 ms p50 per synced RocksDB write against 0.13-0.16 ms here on
// the test VM; W2 rose 1.19x with it). RocksDB (log/rocksdb_log.h) still
// holds every entry; it is
// written without a sync, and the journal only has to cover the entries
// RocksDB may not have made durable yet.
//
// File layout (every part a multiple of kBlockBytes = 4096):
//   block 0, block 1   two header slots, written alternately:
//                      [8 "LHJRNL01"][8 generation][8 nonce][8 start index]
//                      [4 crc32 of the 32 bytes before] (little-endian)
//                      The valid slot with the higher generation is the
//                      header. `start index` is the first entry the current
//                      generation may hold: every entry below it was durable
//                      elsewhere (RocksDB) before the header was written.
//   block 2 ...        records, each starting on a block boundary:
//                      [4 "LHJR"][4 crc32][8 index][4 payload bytes][payload]
//                      zero-padded to whole blocks. The crc covers the nonce,
//                      the index, the length and the payload, so a record of
//                      an earlier generation (a random 64-bit nonce each)
//                      never passes as a current one.
// Records of one generation hold start index, start index + 1, ... in order.
// A record never shares a block with another, so writing one never rewrites
// a block holding an acknowledged record.
//
// Recovery (open of an existing file): the header slot as above (neither
// valid: kCorruption), then records from block 2 while each is valid and
// holds the next index. The first invalid block ends the journal (a record
// torn by a crash was never acknowledged) unless a valid record of the
// current generation follows anywhere after it: that is damage that would
// hide acknowledged entries, and open fails with kCorruption naming the
// offsets.
//
// Errors: kIoError (naming the file and errno) on any failed system call;
// kCorruption as above, or when the file's size is not a whole number of
// blocks of at least 3, or is over kMaxBytes. After a failed append or restart the journal must
// not be used again (a failed fdatasync may have dropped the page cache's
// copy); the caller stops taking writes.
// Thread-safety: none; one thread (the log's writer) owns the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leasehold/status.h"
#include "log/log.h"

namespace leasehold::log {

// The journal's format without I/O (for open(), the tests and the fuzz
// target fuzz/entry_journal_fuzzer.cc).
struct ParsedJournal {
  std::uint64_t generation = 0;
  std::uint64_t nonce = 0;
  LogIndex start_index = 0;
  std::vector<std::pair<LogIndex, std::string>> entries;  // start_index, start_index+1, ...
  std::size_t next_offset = 0;  // where the next record goes (a block boundary)
};
// A whole journal file's bytes, read by the Recovery rules above. Errors:
// kCorruption naming `name` (a bad size, no valid header, damage before a
// later record).
Result<ParsedJournal> parse_entry_journal(std::string_view file, const std::string& name);
// One header slot's block, and one record's blocks (zero-padded).
std::string encode_journal_header(std::uint64_t generation, std::uint64_t nonce, LogIndex start_index);
std::string encode_journal_record(std::uint64_t nonce, LogIndex index, std::string_view payload);

class EntryJournal {
 public:
  static constexpr std::size_t kBlockBytes = 4096;
  static constexpr std::size_t kRecordHeaderBytes = 20;
  static constexpr std::size_t kMaxBytes = 1u << 30;  // open() reads the whole file

  struct Recovered {
    LogIndex start_index = 0;  // the header's start index
    std::vector<std::pair<LogIndex, std::string>> entries;  // start_index, start_index+1, ...
  };

  // Opens the journal at `path`. When the file does not exist it is created
  // `bytes` long (rounded up to whole blocks, at least 3, at most
  // kMaxBytes), zero-filled,
  // synced and renamed into place (its directory synced), with a header
  // that starts at `start_if_created`; a stray "<path>.tmp" is removed.
  // An existing file keeps its own size.
  static Result<std::unique_ptr<EntryJournal>> open(const std::string& path, std::size_t bytes,
                                                    LogIndex start_if_created);
  ~EntryJournal();
  EntryJournal(const EntryJournal&) = delete;
  EntryJournal& operator=(const EntryJournal&) = delete;

  // What open() found (empty entries for a file it created); the entries are
  // handed out once (later calls return the start index and no entries).
  Recovered take_recovered() { return std::exchange(recovered_, Recovered{recovered_.start_index, {}}); }
  // The index the next append() must carry.
  LogIndex next_index() const { return next_index_; }
  // Whether a payload of `payload_bytes` fits in the space left, and
  // whether it would fit in an empty journal.
  bool fits(std::size_t payload_bytes) const;
  bool fits_when_empty(std::size_t payload_bytes) const;

  // Writes the record for `index` (which must be next_index(); asserted) at
  // the next block, then fdatasyncs unless `sync` is false (the unsafe
  // ack-before-fsync test fault). Precondition: fits(payload.size()).
  Status append(LogIndex index, std::string_view payload, bool sync);
  // Starts a new generation that holds entries from `start_index` on, from
  // block 2; the header slot is written and fdatasynced. The caller must
  // have made every entry below `start_index` durable elsewhere first.
  Status restart(LogIndex start_index);

  const std::string& path() const { return path_; }
  std::size_t size_bytes() const { return size_; }

 private:
  EntryJournal(std::string path, int fd, std::size_t size);
  Status recover();  // reads the file and parse_entry_journal()s it

  std::string path_;
  int fd_ = -1;
  std::size_t size_ = 0;
  std::uint64_t generation_ = 0;
  std::uint64_t nonce_ = 0;
  LogIndex next_index_ = 0;
  std::size_t next_offset_ = 0;
  Recovered recovered_;
};

}  // namespace leasehold::log
