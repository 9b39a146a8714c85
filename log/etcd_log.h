// log/etcd_log.h: the etcd backend of log::Log (HA mode, docs/cluster.md).
//
// An etcd cluster (Raft) stores and orders the log. Keys under the cluster
// prefix P ("/leasehold/<cluster>"):
//   P/log/<20-digit index>        one batch: "LHE1" + 8-byte term (little
//                                 endian) + the node's encoded batch
//   P/snap/meta                   the latest snapshot: "LHS1" + index (8) +
//                                 chunk count (4) + total bytes (8) + crc32 (4),
//                                 integers little endian
//   P/snap/<20-digit index>/<6-digit n>   its chunks (<= snapshot_chunk_bytes)
// (P/election/... belongs to cluster/: the election keys.)
//
// APPEND FENCING: append() is one txn: "if create_revision(own election key)
// == term AND log/<last+1> does not exist, put log/<last+1>". A deposed or
// paused primary's append therefore fails (kConflict) and writes nothing.
// When etcd does not answer (outcome unknown) the SAME txn is retried until
// append_timeout; its failure branch reads the entry back, so a retry of an
// append that did land reports success. After append_timeout: kUnavailable
// "etcd unavailable: ... (outcome unknown)"; the entry may still appear, and
// cluster-mode nodes then step down and learn the outcome from the log.
// Without a term (set_term(nullopt), e.g. a standby) append is kConflict.
//
// SNAPSHOTS: save_snapshot() always writes a local snapshot file in
// local_dir. With a term it also stores the snapshot in etcd, even when the
// local write failed (the local file only speeds up this node's restart;
// the etcd copy bounds etcd's log): chunks first,
// then the meta key in a fenced txn; deletes older chunks and the log
// entries <= index, and compacts etcd's history at the revision of the
// PREVIOUS snapshot's meta write (so a standby has one snapshot interval to
// keep up before its watch could hit a compaction).
// Its result: the etcd store's failure, else the local write's (logged; the
// etcd copy, when stored, counts in position().snapshot all the same).
// load_snapshot() returns the newer of the local file and the etcd snapshot.
//
// Threading: as log/log.h. One worker thread runs appends and snapshot
// saves in order and their callbacks. set_term/observe/position are
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etcd/client.h"
#include "etcd/key_queue.h"
#include "log/log.h"

namespace leasehold::log {

struct EtcdLogOptions {
  std::shared_ptr<etcd::Client> client;  // required
  std::string prefix;                    // "/leasehold/<cluster>", no trailing '/'
  std::string local_dir;                 // local snapshot files (created if missing)
  std::chrono::milliseconds append_timeout{3000};
  std::size_t snapshot_chunk_bytes = 512u << 10;
};

// Largest batch one append accepts (etcd's value limit minus the header).
inline constexpr std::size_t kEtcdMaxBatchBytes = etcd::kMaxValueBytes - 64;

// What a standby that lost its log watch needs to catch up (read_catch_up()):
// one consistent read of etcd at store revision `revision`.
struct EtcdCatchUp {
  LogIndex snapshot_index = 0;  // the etcd snapshot; 0 = none stored (start from the empty state)
  std::string snapshot_bytes;
  // Every log entry after the snapshot at `revision`, in index order, without
  // gaps (the batches, entry header removed).
  std::vector<std::pair<LogIndex, std::string>> entries;
  std::int64_t revision = 0;    // watch the log from revision + 1
};

class EtcdLog final : public Log {
 public:
  // Checks the options and creates local_dir; contacts etcd only on use.
  // Errors: kInvalidArgument (no client/prefix/dir), kIoError (dir).
  static Result<std::unique_ptr<EtcdLog>> open(EtcdLogOptions options);
  ~EtcdLog() override;
  EtcdLog(const EtcdLog&) = delete;
  EtcdLog& operator=(const EtcdLog&) = delete;

  void append(std::string batch, AppendDone done) override;
  // Errors besides log.h's: kUnavailable (etcd), kNotFound (entries before
  // `from` were deleted after a snapshot), kCorruption (bad entry or gap).
  Status read(LogIndex from, const Visitor& visit) override;
  void save_snapshot(LogIndex index, std::string bytes, StatusDone done) override;
  Result<std::optional<Snapshot>> load_snapshot() override;
  Position position() const override;
  std::string describe() const override;

  // The election key that fences appends (nullopt: this node may not append).
  void set_term(std::optional<etcd::QueueKey> term);
  // An entry appended by another node was applied: last = max(last, index).
  void observe(LogIndex index);
  // etcd store revision seen by the last read() (the watch continues after it).
  std::int64_t read_revision() const;
  // etcd store revision of the newest append of this log that succeeded
  // (0: none since open). Every entry of another node that follows this
  // node's own appends in the log has a higher revision. Thread-safe.
  std::int64_t last_append_revision() const;
  // Catch-up read for a standby whose watch fell behind a compaction (or saw
  // a gap): the etcd snapshot (meta and chunks) and every entry after it,
  // all read at ONE store revision (the meta read's), so snapshot + entries
  // are exactly the log at that revision. Raises position() (last, snapshot)
  // to what it read. Does not touch the local snapshot file. Thread-safe
  // (meant for a background thread; blocks up to a few etcd call timeouts).
  // Errors: kUnavailable (etcd), kNotFound (that revision was compacted
  // while reading: retry), kLimitExceeded (more than `max_entries` entries
  // after the snapshot), kCorruption (malformed meta/chunk/entry, a gap).
  Result<EtcdCatchUp> read_catch_up(std::size_t max_entries);

  // Key layout helpers (shared with cluster/).
  static std::string log_key(std::string_view prefix, LogIndex index);
  static std::string log_prefix(std::string_view prefix);  // "P/log/"
  // The index of a log key, nullopt if `key` is not one.
  static std::optional<LogIndex> parse_log_key(std::string_view prefix, std::string_view key);
  // The batch inside a stored entry. kCorruption on a bad header.
  static Result<std::string_view> entry_batch(std::string_view value);
  // The highest index in etcd now (log entries or the etcd snapshot), with
  // the store revision of that (linearizable) read. kUnavailable from etcd.
  static Result<std::pair<LogIndex, std::int64_t>> highest_index(etcd::Client& client, std::string_view prefix);

 private:
  class Worker;
  explicit EtcdLog(EtcdLogOptions options);
  Result<LogIndex> do_append(LogIndex index, const std::string& batch);
  // This node's append of `index` landed at store `revision`: raises
  // position().last and last_append_revision under one lock.
  void appended(LogIndex index, std::int64_t revision);
  void raise_last(LogIndex index);  // position().last = max(last, index); caller holds state_->mu
  Status do_save_snapshot(LogIndex index, const std::string& bytes);
  Status store_snapshot_in_etcd(LogIndex index, const std::string& bytes, const etcd::QueueKey& term);
  Result<std::optional<Snapshot>> load_etcd_snapshot(LogIndex newer_than);
  // The snapshot the meta range result `meta` names (chunks read at its
  // revision); nullopt if none or not newer than `newer_than`.
  Result<std::optional<Snapshot>> read_etcd_snapshot(const etcd::RangeResult& meta, LogIndex newer_than);
  // Entries >= from at store `revision` (0 = now), in order. *read_at: the
  // revision read; *last: the last index visited (from - 1 if none).
  Status read_entries(LogIndex from, std::int64_t revision, const Visitor& visit, std::int64_t* read_at,
                      LogIndex* last);
  std::optional<etcd::QueueKey> term() const;

  EtcdLogOptions options_;
  struct State;
  std::unique_ptr<State> state_;
  std::unique_ptr<Worker> worker_;
};

}  // namespace leasehold::log
