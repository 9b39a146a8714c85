// log/log.h: the ordered, durable command log behind one small interface.
//
// The log stores opaque byte batches (the node's encoded command batches) at
// consecutive indices 1, 2, 3, ... and snapshots of the state at some index.
// Only the log knows where bytes are stored: the embedded backend
// (log/rocksdb_log.h) keeps them on local disk; an etcd backend keeps them in
// an etcd cluster. Both fit behind this interface unchanged.
//
// Indices: the first entry ever appended has index 1. After save_snapshot(i)
// the entries <= i may be deleted; read() then starts after the snapshot.
// Indices never repeat and never have gaps.
//
// Threading: a Log is owned by one thread (the node's loop thread), which
// calls append/save_snapshot/read/load_snapshot. Completion callbacks run on a
// thread owned by the log (never inside the calling function), one at a time,
// in the order the operations were issued. position() is thread-safe.
//
// Destruction: the destructor finishes the operations already issued (their
// callbacks run, on the log's thread, before the destructor returns) and then
// releases the storage.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/status.h"

namespace leasehold::log {

// The position of an entry in the log; 0 means "none".
using LogIndex = std::uint64_t;

struct Snapshot {
  LogIndex index = 0;   // the snapshot covers every entry <= index
  std::string bytes;    // opaque to the log
};

// Where the log stands, for INFO and tests.
struct Position {
  LogIndex first = 0;     // lowest entry still stored (0 = none stored)
  LogIndex last = 0;      // highest entry appended and synced (or covered by the snapshot)
  LogIndex snapshot = 0;  // index of the latest saved snapshot (0 = none)
};

class Log {
 public:
  virtual ~Log() = default;

  using AppendDone = std::function<void(Result<LogIndex>)>;
  using StatusDone = std::function<void(Status)>;
  // Called for each entry during read(); a non-OK return stops the read and
  // becomes read()'s result.
  using Visitor = std::function<Status(LogIndex index, std::string_view batch)>;

  // Durably appends one batch at index position().last + 1. `done` runs on the
  // log's thread after the batch is synced (value: its index) or failed.
  // The caller keeps at most ONE append in flight (group commit is the
  // node's job); a second append before the first completed is a programming
  // error answered with kInternal.
  // Errors: kIoError (the disk refused; the log refuses every later append
  //   too, and an entry whose append failed may or may not reappear after a
  //   restart: its outcome is unknown), kLimitExceeded (batch over the
  //   backend's size limit; nothing written), kUnavailable (backend cannot
  //   serve now, e.g. closed, etcd unreachable), kConflict (this node is no
  //   longer allowed to append: deposed primary; etcd backend).
  virtual void append(std::string batch, AppendDone done) = 0;

  // Replays the stored entries with index >= from, in index order, calling
  // `visit` on the calling thread. Synchronous; used for recovery before the
  // first append. `from` below position().first (after a truncation) is
  // kNotFound. Errors: kCorruption (an entry failed its checksum; the message
  // names the entry), kIoError, or the visitor's error.
  virtual Status read(LogIndex from, const Visitor& visit) = 0;

  // Durably stores `bytes` as the snapshot at `index` (which must be <=
  // position().last and > position().snapshot, else kInvalidArgument), then
  // deletes the entries <= index. `done` runs on the log's thread, after the
  // appends issued before this call. Errors: kIoError, kInvalidArgument.
  // A failed save leaves the previous snapshot and the entries intact.
  virtual void save_snapshot(LogIndex index, std::string bytes, StatusDone done) = 0;

  // Streamed snapshots (optional): the same as save_snapshot(index, <the
  // pieces concatenated>, done), for an image produced piece by piece, so it
  // is never whole in memory. Only where streams_snapshots() is true (the
  // embedded backend); elsewhere calling them is a programming error
  // (asserted). At most one stream at a time, and no save_snapshot() during
  // it. begin_snapshot_stream(index) starts one; add_snapshot_piece() queues
  // the next bytes (written on the log's thread, in order with appends);
  // finish_snapshot_stream(done) stores it durably and runs `done` as
  // save_snapshot() does, with the first error of any piece;
  // abandon_snapshot_stream() drops it (nothing stored, no callback).
  virtual bool streams_snapshots() const { return false; }
  virtual void begin_snapshot_stream(LogIndex index);
  virtual void add_snapshot_piece(std::string bytes);
  virtual void finish_snapshot_stream(StatusDone done);
  virtual void abandon_snapshot_stream();

  // The latest snapshot, or nullopt if none was ever saved. Synchronous.
  // Errors: kCorruption (checksum/format; the message names the file or
  // key), kIoError.
  virtual Result<std::optional<Snapshot>> load_snapshot() = 0;

  // Thread-safe.
  virtual Position position() const = 0;

  // Human-readable backend description for INFO ("rocksdb /var/lib/x").
  virtual std::string describe() const = 0;
};

}  // namespace leasehold::log
