#include "log/rocksdb_log.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <functional>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "common/assert.h"
#include "common/unsafe_test_faults.h"
#include "log/entry_journal.h"
#include "log/log_format.h"
#include "log/snapshot_file.h"

namespace leasehold::log {
namespace {

// RocksDB's diagnostics go to the server's log instead of a LOG file in the
// data dir: on a full or failing disk, RocksDB 7.8's file logger asserts
// (aborts the process) when it is written again after a failed write.
class SpdlogRocksLogger final : public rocksdb::Logger {
 public:
  explicit SpdlogRocksLogger(rocksdb::InfoLogLevel level) : rocksdb::Logger(level) {}
  void Logv(const char* format, va_list ap) override { Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap); }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char text[1024];
    std::vsnprintf(text, sizeof text, format, ap);
    const spdlog::level::level_enum to = level >= rocksdb::InfoLogLevel::ERROR_LEVEL  ? spdlog::level::err
                                         : level >= rocksdb::InfoLogLevel::WARN_LEVEL ? spdlog::level::warn
                                                                                      : spdlog::level::info;
    spdlog::log(to, "rocksdb: {}", text);
  }
};

Status from_rocks(const rocksdb::Status& s, const std::string& what) {
  const ErrorCode code = s.IsCorruption() ? ErrorCode::kCorruption : ErrorCode::kIoError;
  return Status(code, what + ": " + s.ToString());
}

class RocksLog final : public Log {
 public:
  explicit RocksLog(RocksLogOptions options) : options_(std::move(options)) {}
  ~RocksLog() override;

  Status open();
  void append(std::string batch, AppendDone done) override;
  Status read(LogIndex from, const Visitor& visit) override;
  void save_snapshot(LogIndex index, std::string bytes, StatusDone done) override;
  bool streams_snapshots() const override { return true; }
  void begin_snapshot_stream(LogIndex index) override;
  void add_snapshot_piece(std::string bytes) override;
  void finish_snapshot_stream(StatusDone done) override;
  void abandon_snapshot_stream() override;
  Result<std::optional<Snapshot>> load_snapshot() override;
  Position position() const override { return {first_.load(), last_.load(), snapshot_.load()}; }
  std::string describe() const override { return "rocksdb " + options_.dir; }

 private:
  enum class Kind { kAppend, kSnapshot, kStreamBegin, kStreamPiece, kStreamFinish, kStreamAbandon };
  struct Task {
    Kind kind = Kind::kAppend;
    bool reject = false;  // a second append while one was in flight
    LogIndex index = 0;   // snapshot index
    std::string bytes;
    AppendDone append_done;
    StatusDone snapshot_done;
  };

  Status load_latest_snapshot();
  Status scan_entries();
  // Opens the journal after scan_entries(): its checks, and its entries
  // written back into RocksDB (see rocksdb_log.h, Recovery).
  Status open_journal(bool existed);
  // RocksDB's WAL synced, then a new journal generation at last_ + 1.
  Status sync_and_restart_journal();
  // hold-first-append (an unsafe test switch): polls for the release file.
  void hold_until_released();
  // The journal write (synced unless !sync) and the RocksDB put of one entry.
  Status write_entry(LogIndex index, const std::string& batch, bool sync);
  void enqueue(Task task);
  void writer_loop();
  Result<LogIndex> do_append(const std::string& batch);
  Status do_snapshot(LogIndex index, const std::string& bytes);
  // Checks a snapshot's index and writes its file (`write`), then truncates
  // the entries it covers and removes the previous snapshot file.
  Status store_snapshot(LogIndex index, const std::function<Status()>& write);
  void do_stream(Task& task);
  std::string db_dir() const { return options_.dir + "/rocksdb"; }
  std::string journal_path() const { return options_.dir + "/journal"; }

  const RocksLogOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<EntryJournal> journal_;  // writer thread only, after open()
  bool writer_started_ = false;  // open() completed
  std::atomic<LogIndex> first_{0};
  std::atomic<LogIndex> last_{0};
  std::atomic<LogIndex> snapshot_{0};
  std::optional<Snapshot> opened_snapshot_;  // verified at open, handed out once
  std::atomic<int> appends_in_flight_{0};
  Status failed_;  // writer thread only: set after a failed write, never cleared
  bool appended_ = false;  // writer thread only: an append was attempted (hold-first-append)
  // The snapshot stream (writer thread only): its file, and its first error.
  bool stream_open_ = false;       // loop thread: a stream was begun and not finished
  LogIndex stream_index_ = 0;
  std::unique_ptr<SnapshotFileWriter> stream_file_;
  Status stream_failed_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::thread writer_;
};

RocksLog::~RocksLog() {
  if (writer_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    writer_.join();
  }
  if (writer_started_ && failed_.is_ok()) {
    // A clean close leaves everything in RocksDB's synced WAL and an empty
    // journal, so damage to RocksDB found later is reported, not repaired.
    // Only after a complete open(): a refused one leaves the journal as it
    // found it, so the next open is refused the same way.
    if (Status st = sync_and_restart_journal(); !st) {
      spdlog::warn("log: closing without emptying the journal error=\"{}\"", st.message());
    }
  }
  if (db_) {
    (void)db_->Close();
    db_.reset();
  }
}

Status RocksLog::open() {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "create " + options_.dir + ": " + ec.message());
  // RocksDB logs an error when its directory is missing, even if it is to create it.
  std::filesystem::create_directories(db_dir(), ec);
  if (ec) return Status(ErrorCode::kIoError, "create " + db_dir() + ": " + ec.message());
  if (Status st = load_latest_snapshot(); !st) return st;
  const bool journal_existed = std::filesystem::exists(journal_path(), ec);

  rocksdb::Options o;
  o.create_if_missing = true;
  o.paranoid_checks = true;
  // With a journal, RocksDB's WAL is synced only now and then: keep its
  // undamaged prefix, and the journal supplies the rest. Without one (a data
  // dir from before the journal), every write was synced: drop only a torn
  // record at the very end of the WAL and fail on anything else.
  o.wal_recovery_mode = journal_existed ? rocksdb::WALRecoveryMode::kPointInTimeRecovery
                                        : rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  o.compression = rocksdb::kNoCompression;
  o.max_background_jobs = 2;
  o.write_buffer_size = 16u << 20;
  o.keep_log_file_num = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.info_log = std::make_shared<SpdlogRocksLogger>(o.info_log_level);
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s = rocksdb::DB::Open(o, db_dir(), &raw);
  if (!s.ok()) return from_rocks(s, "open rocksdb " + db_dir());
  db_.reset(raw);
  if (Status st = scan_entries(); !st) return st;
  if (Status st = open_journal(journal_existed); !st) return st;
  writer_ = std::thread([this] { writer_loop(); });
  writer_started_ = true;
  return Status::ok();
}

Status RocksLog::load_latest_snapshot() {
  auto files = list_snapshot_files(options_.dir, /*remove_temp=*/true);
  if (!files) return files.status();
  if (files->empty()) return Status::ok();
  const SnapshotFileName& newest = files->back();
  auto snap = read_snapshot_file(newest.path, newest.index);
  if (!snap) return snap.status();
  // Older snapshots are leftovers of a crash between rename and cleanup.
  for (std::size_t i = 0; i + 1 < files->size(); ++i) {
    std::error_code ec;
    std::filesystem::remove((*files)[i].path, ec);
  }
  snapshot_ = newest.index;
  opened_snapshot_ = std::move(snap.value());
  return Status::ok();
}

Status RocksLog::scan_entries() {
  const LogIndex snap = snapshot_.load();
  LogIndex first = 0;
  LogIndex prev = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto index = decode_entry_key(it->key().ToStringView());
    if (!index) return Status(ErrorCode::kCorruption, db_dir() + ": " + index.status().message());
    if (prev != 0 && *index != prev + 1) {
      return Status(ErrorCode::kCorruption, db_dir() + ": gap: " + describe_entry(*index) +
                                                " follows entry " + std::to_string(prev));
    }
    if (auto payload = decode_entry_value(*index, it->value().ToStringView()); !payload) {
      return Status(ErrorCode::kCorruption, db_dir() + ": " + payload.status().message());
    }
    if (first == 0) first = *index;
    prev = *index;
  }
  if (!it->status().ok()) return from_rocks(it->status(), "scan " + db_dir());
  if (first != 0 && first > snap + 1) {
    return Status(ErrorCode::kCorruption,
                  db_dir() + ": log starts at " + describe_entry(first) + " but " +
                      (snap == 0 ? std::string("there is no snapshot")
                                 : "the snapshot " + snapshot_path(options_.dir, snap) +
                                       " ends at entry " + std::to_string(snap)));
  }
  if (first != 0 && first <= snap) {
    // Entries covered by the snapshot whose deletion did not happen (crash).
    rocksdb::WriteOptions wo;
    wo.sync = true;
    const rocksdb::Status s = db_->DeleteRange(wo, db_->DefaultColumnFamily(),
                                               encode_entry_key(first), encode_entry_key(snap + 1));
    if (!s.ok()) return from_rocks(s, "truncate " + db_dir());
    first = prev > snap ? snap + 1 : 0;
  }
  first_ = first;
  last_ = prev > snap ? prev : snap;
  return Status::ok();
}

Status RocksLog::open_journal(bool existed) {
  const LogIndex end = last_.load();  // the last entry, or the snapshot's
  auto journal = EntryJournal::open(journal_path(), options_.journal_bytes, end + 1);
  if (!journal) return journal.status();
  journal_ = std::move(journal).value();
  EntryJournal::Recovered found = journal_->take_recovered();
  if (!existed) return Status::ok();
  if (found.start_index > end + 1) {
    const LogIndex durable = found.entries.empty() ? found.start_index - 1 : found.entries.back().first;
    const std::string lost = "the log lost entries " + std::to_string(end + 1) + ".." + std::to_string(durable) +
                             ": the journal " + journal_path() + " shows entries through " +
                             std::to_string(durable) + " were durable, but " + db_dir() +
                             (snapshot_.load() != 0 ? " and the snapshot" : "") + " end at entry " +
                             std::to_string(end);
    if (!options_.accept_lost_entries) {
      return Status(ErrorCode::kCorruption,
                    lost + "; restore the data dir from a backup, or restart with --recover-lost-log");
    }
    spdlog::warn("log: {}; going on without them (--recover-lost-log)", lost);
    return sync_and_restart_journal();
  }
  std::size_t written_back = 0;
  rocksdb::WriteOptions wo;  // synced below, before the journal forgets them
  for (const auto& [index, payload] : found.entries) {
    if (index <= end) continue;
    LEASEHOLD_ASSERT(index == last_.load() + 1, "journal entry {} does not follow entry {}", index, last_.load());
    const rocksdb::Status s = db_->Put(wo, encode_entry_key(index), encode_entry_value(index, payload));
    if (!s.ok()) return from_rocks(s, "write back " + describe_entry(index) + " from the journal to " + db_dir());
    if (first_.load() == 0) first_ = index;
    last_ = index;
    ++written_back;
  }
  if (written_back != 0) {
    spdlog::info("log: wrote back {} entries from the journal ({}..{})", written_back, end + 1, last_.load());
  }
  return sync_and_restart_journal();
}

Status RocksLog::sync_and_restart_journal() {
  if (const rocksdb::Status s = db_->SyncWAL(); !s.ok()) return from_rocks(s, "sync the WAL of " + db_dir());
  return journal_->restart(last_.load() + 1);
}

void RocksLog::enqueue(Task task) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void RocksLog::append(std::string batch, AppendDone done) {
  Task task;
  task.kind = Kind::kAppend;
  task.reject = appends_in_flight_.fetch_add(1) > 0;
  task.bytes = std::move(batch);
  task.append_done = std::move(done);
  enqueue(std::move(task));
}

void RocksLog::save_snapshot(LogIndex index, std::string bytes, StatusDone done) {
  LEASEHOLD_ASSERT(!stream_open_, "save_snapshot({}) during a snapshot stream", index);
  Task task;
  task.kind = Kind::kSnapshot;
  task.index = index;
  task.bytes = std::move(bytes);
  task.snapshot_done = std::move(done);
  enqueue(std::move(task));
}

void RocksLog::begin_snapshot_stream(LogIndex index) {
  LEASEHOLD_ASSERT(!stream_open_, "a second snapshot stream (at {})", index);
  stream_open_ = true;
  Task task;
  task.kind = Kind::kStreamBegin;
  task.index = index;
  enqueue(std::move(task));
}

void RocksLog::add_snapshot_piece(std::string bytes) {
  LEASEHOLD_ASSERT(stream_open_, "a snapshot piece without a stream");
  Task task;
  task.kind = Kind::kStreamPiece;
  task.bytes = std::move(bytes);
  enqueue(std::move(task));
}

void RocksLog::finish_snapshot_stream(StatusDone done) {
  LEASEHOLD_ASSERT(stream_open_, "finishing a snapshot stream that was not begun");
  stream_open_ = false;
  Task task;
  task.kind = Kind::kStreamFinish;
  task.snapshot_done = std::move(done);
  enqueue(std::move(task));
}

void RocksLog::abandon_snapshot_stream() {
  if (!stream_open_) return;
  stream_open_ = false;
  Task task;
  task.kind = Kind::kStreamAbandon;
  enqueue(std::move(task));
}

void RocksLog::do_stream(Task& task) {
  switch (task.kind) {
    case Kind::kStreamBegin: {
      stream_index_ = task.index;
      stream_failed_ = Status::ok();
      auto file = SnapshotFileWriter::create(options_.dir, task.index);
      if (file) {
        stream_file_ = std::move(file).value();
      } else {
        stream_failed_ = file.status();
      }
      return;
    }
    case Kind::kStreamPiece:
      if (stream_failed_.is_ok() && stream_file_) stream_failed_ = stream_file_->append(task.bytes);
      return;
    case Kind::kStreamFinish: {
      Status st = stream_failed_;
      if (st.is_ok()) st = store_snapshot(stream_index_, [this] { return stream_file_->finish(); });
      stream_file_.reset();  // removes the .tmp unless finish() renamed it
      if (task.snapshot_done) task.snapshot_done(std::move(st));
      return;
    }
    case Kind::kStreamAbandon:
      stream_file_.reset();
      return;
    case Kind::kAppend:
    case Kind::kSnapshot:
      break;
  }
  LEASEHOLD_ASSERT(false, "not a stream task");
}

// The writer sleeps on cv_ between tasks: a writer that watched its queue
// for 50-300 us first, to save the hop from the loop (16-21 us), measured
// 0.97-1.03x on W2 for 19-62% more CPU per command on 2 shared cores.
void RocksLog::writer_loop() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything issued is done
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (task.kind == Kind::kAppend) {
      Result<LogIndex> result =
          task.reject ? Result<LogIndex>(ErrorCode::kInternal, "append while another append is in flight")
                      : do_append(task.bytes);
      appends_in_flight_.fetch_sub(1);
      if (task.append_done) task.append_done(std::move(result));
    } else if (task.kind == Kind::kSnapshot) {
      Status st = do_snapshot(task.index, task.bytes);
      if (task.snapshot_done) task.snapshot_done(std::move(st));
    } else {
      do_stream(task);
    }
  }
}

Result<LogIndex> RocksLog::do_append(const std::string& batch) {
  if (!failed_.is_ok()) {
    return Status(ErrorCode::kIoError, "log stopped after an earlier write error: " + failed_.message());
  }
  if (batch.size() > options_.max_entry_bytes) {
    return Status(ErrorCode::kLimitExceeded, "log entry of " + std::to_string(batch.size()) +
                                                 " bytes exceeds " +
                                                 std::to_string(options_.max_entry_bytes));
  }
  const LogIndex index = last_.load() + 1;
  // Entries only ever go after the snapshot: one at or below it would be
  // skipped by recovery (the snapshot already covers its index).
  LEASEHOLD_ASSERT(index > snapshot_.load(), "append at {} at or below the snapshot at {}", index,
                   snapshot_.load());
  // UNSAFE TEST FAULT hold-first-append (common/unsafe_test_faults.h):
  // timing only; the first append waits until the test releases it.
  if (!std::exchange(appended_, true) && unsafe::enabled(unsafe::TestFault::kHoldFirstAppend)) {
    hold_until_released();
  }
  // UNSAFE TEST FAULT ack-before-fsync (common/unsafe_test_faults.h): the
  // entry stays in the page cache, and the caller answers as if durable.
  const bool sync = !unsafe::enabled(unsafe::TestFault::kAckBeforeFsync);
  const auto started = std::chrono::steady_clock::now();
  const Status st = write_entry(index, batch, sync);
  if (st && options_.on_synced_write) options_.on_synced_write(std::chrono::steady_clock::now() - started);
  if (!st) {
    failed_ = Status(st.code(), "write " + describe_entry(index) + ": " + st.message());
    // Never retried (a failed fsync may have lost the page cache's copy, as
    // PostgreSQL learned): the node stops taking writes until a restart.
    spdlog::critical("the log failed and takes no more writes until the server is restarted error=\"{}\"",
                     failed_.message());
    return Status(ErrorCode::kIoError, failed_.message());
  }
  if (first_.load() == 0) first_ = index;
  last_ = index;
  return index;
}

void RocksLog::hold_until_released() {
  const std::filesystem::path release = std::filesystem::path(options_.dir) / "release-first-append";
  spdlog::critical("UNSAFE TEST FAULT hold-first-append: the first append waits until {} exists (60 s at most)",
                   release.string());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::error_code ec;
  while (!std::filesystem::exists(release, ec) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::filesystem::remove(release, ec);  // the next start holds again
}

Status RocksLog::write_entry(LogIndex index, const std::string& batch, bool sync) {
  if (!journal_->fits(batch.size())) {
    // Full: everything before `index` goes durable in RocksDB, so the
    // journal may start over at `index`.
    if (Status st = sync_and_restart_journal(); !st) return st;
  }
  rocksdb::WriteOptions wo;
  if (!journal_->fits(batch.size())) {
    // Larger than the whole journal: RocksDB's own synced write, after which
    // the journal starts past it.
    wo.sync = sync;
    const rocksdb::Status s = db_->Put(wo, encode_entry_key(index), encode_entry_value(index, batch));
    if (!s.ok()) return from_rocks(s, db_dir());
    return journal_->restart(index + 1);
  }
  if (Status st = journal_->append(index, batch, sync); !st) return st;
  // Not synced: the journal holds the entry until RocksDB's WAL is synced.
  const rocksdb::Status s = db_->Put(wo, encode_entry_key(index), encode_entry_value(index, batch));
  return s.ok() ? Status::ok() : from_rocks(s, db_dir());
}

Status RocksLog::do_snapshot(LogIndex index, const std::string& bytes) {
  return store_snapshot(index, [&] { return write_snapshot_file(options_.dir, index, bytes); });
}

Status RocksLog::store_snapshot(LogIndex index, const std::function<Status()>& write) {
  if (index <= snapshot_.load() || index > last_.load()) {
    return Status(ErrorCode::kInvalidArgument,
                  "snapshot index " + std::to_string(index) + " outside (" +
                      std::to_string(snapshot_.load()) + ", " + std::to_string(last_.load()) + "]");
  }
  if (Status st = write(); !st) return st;
  const LogIndex previous = snapshot_.exchange(index);
  // The new snapshot is durable: entries <= index and the old file may go.
  const LogIndex first = first_.load();
  if (first != 0) {
    rocksdb::WriteOptions wo;  // not synced: if lost, open() deletes them again
    const rocksdb::Status s = db_->DeleteRange(wo, db_->DefaultColumnFamily(),
                                               encode_entry_key(first), encode_entry_key(index + 1));
    if (!s.ok()) return from_rocks(s, "truncate " + db_dir() + " up to " + describe_entry(index));
    first_ = last_.load() > index ? index + 1 : 0;
  }
  if (previous != 0) {
    std::error_code ec;
    std::filesystem::remove(snapshot_path(options_.dir, previous), ec);
  }
  return Status::ok();
}

Status RocksLog::read(LogIndex from, const Visitor& visit) {
  if (from == 0) from = 1;
  const LogIndex snap = snapshot_.load();
  if (from <= snap) {
    return Status(ErrorCode::kNotFound, "entries up to " + std::to_string(snap) +
                                            " were replaced by the snapshot; read from " +
                                            std::to_string(snap + 1));
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  LogIndex expect = from;
  for (it->Seek(encode_entry_key(from)); it->Valid(); it->Next()) {
    auto index = decode_entry_key(it->key().ToStringView());
    if (!index) return Status(ErrorCode::kCorruption, db_dir() + ": " + index.status().message());
    if (*index != expect) {
      return Status(ErrorCode::kCorruption, db_dir() + ": gap: expected entry " +
                                                std::to_string(expect) + ", found " +
                                                describe_entry(*index));
    }
    auto payload = decode_entry_value(*index, it->value().ToStringView());
    if (!payload) return Status(ErrorCode::kCorruption, db_dir() + ": " + payload.status().message());
    if (Status st = visit(*index, *payload); !st) return st;
    ++expect;
  }
  if (!it->status().ok()) return from_rocks(it->status(), "read " + db_dir());
  return Status::ok();
}

Result<std::optional<Snapshot>> RocksLog::load_snapshot() {
  if (opened_snapshot_) {
    std::optional<Snapshot> out = std::move(opened_snapshot_);
    opened_snapshot_.reset();
    return out;
  }
  const LogIndex snap = snapshot_.load();
  if (snap == 0) return std::optional<Snapshot>();
  auto loaded = read_snapshot_file(snapshot_path(options_.dir, snap), snap);
  if (!loaded) return loaded.status();
  return std::optional<Snapshot>(std::move(loaded.value()));
}

}  // namespace

Result<std::unique_ptr<Log>> open_rocksdb_log(const RocksLogOptions& options) {
  if (options.dir.empty()) return Status(ErrorCode::kInvalidArgument, "log directory is empty");
  auto log = std::make_unique<RocksLog>(options);
  if (Status st = log->open(); !st) return st;
  return std::unique_ptr<Log>(std::move(log));
}

}  // namespace leasehold::log
