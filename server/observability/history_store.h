// server/observability/history_store.h: the audit history: a bounded, durable ring of
// AuditEvent records (docs/operations.md, "Audit history").
//
// Storage: two segment files, <data_dir>/history.log (the current one,
// appended to) and history.log.old (the previous one, read only). Each is a
// magic line, then records [u32 length][u32 crc32][payload]. append() keeps
// the framed record in a buffer; flush() writes everything buffered with one
// write(). The owner calls flush() before any reply leaves the server and
// once per loop turn, so a process crash or kill -9 loses no record of a
// command whose reply was sent, at one write() per batch instead of one per
// record (one write() per record was 8% of the server's samples under
// W1). Written records are fdatasync'ed by a
// background thread at most `sync_interval` after their write (a power loss
// may lose that window).
// A torn or corrupt tail (crash mid-write) is cut off the current file at
// open and skipped in the old one. When the current file holds max_entries
// records it is renamed over the old one and a new one is started (a rename
// and a file creation on the caller's thread; the old file's sync and the
// directory's happen on the sync thread). The disk so holds at most
// 2 x max_entries records, and no append rewrites the whole history: the
// rewrite it replaced stalled the event loop 50-250 ms per 100k records.
// The history costs about a tenth of lease-mode W1's rate; it stays.
//
// Records are numbered (id) in append order, continuing across restarts. The
// wall-clock time is for display only; nothing orders or expires by it.
//
// Errors: open() gives kIoError (cannot create/read a file) or kCorruption
// (a file that is not a history file) naming it. A later write, rename or
// background sync failure does not stop the server: the store keeps serving
// what it has in memory, counts the failure (write_errors(), logged) and
// retries on the next append / sync.
//
// Thread-safety: one owner thread (the loop thread) calls every method; the
// store's own sync thread only syncs (and closes the old segments' fds that
// rotate() hands it).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leasehold/status.h"
#include "log/log.h"
#include "server/observability/audit_event.h"

namespace leasehold::server {

struct HistoryRecord {
  std::uint64_t id = 0;
  std::int64_t wall_ms = 0;        // unix ms, display only
  log::LogIndex log_index = 0;     // the log entry whose command caused it
  core::LogMillis log_ms = 0;      // the command's log-clock stamp
  AuditEvent event;
  friend bool operator==(const HistoryRecord&, const HistoryRecord&) = default;
};

struct HistoryOptions {
  std::string path;                 // the history file
  std::size_t max_entries = 100'000;  // >= 1
  std::chrono::milliseconds sync_interval{1000};
  // The background sync of the file (the sync thread calls it with a dup of
  // the fd): ::fdatasync, or a failing one in tests of the error path.
  int (*sync_file)(int fd) = ::fdatasync;
};

class HistoryStore {
 public:
  static Result<std::unique_ptr<HistoryStore>> open(const HistoryOptions& options);
  ~HistoryStore();
  HistoryStore(const HistoryStore&) = delete;
  HistoryStore& operator=(const HistoryStore&) = delete;

  // Numbers `event` (id), keeps it and buffers it for the next flush().
  const HistoryRecord& append(std::int64_t wall_ms, log::LogIndex index, core::LogMillis log_ms, AuditEvent event);
  // Writes every buffered record to the file with one write() (nothing to do
  // when none is buffered: one branch). A failed write counts one error per
  // record (write_errors()) and drops them from the file, not from memory.
  void flush() {
    if (!pending_.empty()) write_pending();
  }

  // Newest first: at most `count` records with id < before_id (0 = no bound),
  // of lock `lock` only when `filter_lock` is true.
  std::vector<HistoryRecord> query(bool filter_lock, std::string_view lock, std::size_t count,
                                   std::uint64_t before_id = 0) const;

  std::size_t size() const { return ring_.size(); }
  std::uint64_t last_id() const { return next_id_ - 1; }
  // Writes and segment switches that failed, plus background syncs that failed (the records
  // since the previous sync may then be lost at a power loss).
  std::uint64_t write_errors() const { return write_errors_ + sync_errors_.load(); }
  // Segment files that had a torn or corrupt tail at open (0, 1 or 2).
  std::uint64_t dropped_at_open() const { return dropped_at_open_; }

 private:
  explicit HistoryStore(HistoryOptions options);
  Status load();
  void write_pending();
  // Renames the current file to old_path_ and starts a new one.
  void rotate();
  // fdatasyncs and closes segments retired by rotate(), then the directory.
  void sync_retired(std::vector<int> fds);
  void sync_loop();

  HistoryOptions options_;
  std::string old_path_;  // options_.path + ".old"
  std::deque<HistoryRecord> ring_;
  std::uint64_t next_id_ = 1;
  std::size_t records_in_file_ = 0;   // in the current file
  bool current_is_old_ = false;       // renamed, but no new file could be started
  bool rotate_failing_ = false;       // the last rotate() failed (logged once per run of failures)
  std::string pending_;               // framed records not written yet
  std::size_t pending_records_ = 0;
  std::uint64_t write_errors_ = 0;
  std::atomic<std::uint64_t> sync_errors_{0};  // counted by the sync thread
  std::uint64_t dropped_at_open_ = 0;

  std::mutex mu_;  // guards fd_ changes against the sync thread, and the flags below
  int fd_ = -1;
  std::vector<int> retired_;  // old segments' fds, for the sync thread to sync and close
  bool dirty_ = false;
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread sync_thread_;
};

// The record's payload bytes, and back (kCorruption when malformed). Exposed
// for tests and fuzz/history_file_fuzzer.cc.
std::string encode_history_record(const HistoryRecord& record);
Result<HistoryRecord> decode_history_record(std::string_view bytes);

// One segment file's bytes (`data`, read from `path`), parsed: its records
// up to the first torn or corrupt frame. kCorruption naming `path` when the
// bytes are not empty and do not start with the history header; nothing
// else fails. Pure; exposed for tests and the fuzzer.
struct HistorySegment {
  std::vector<HistoryRecord> records;
  std::size_t good = 0;  // bytes up to the end of the last sound record (0: empty, no header)
  bool torn = false;     // bytes follow `good` (a torn or corrupt tail)
};
Result<HistorySegment> parse_history_segment(const std::string& path, std::string_view data);

}  // namespace leasehold::server
