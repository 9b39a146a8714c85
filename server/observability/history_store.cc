#include "server/observability/history_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "core/byte_io.h"
#include "log/log_format.h"

namespace leasehold::server {
namespace {

constexpr std::string_view kMagic = "leasehold-history-v1\n";
constexpr std::size_t kMaxRecordBytes = 1u << 20;
constexpr std::size_t kMaxField = 1u << 20;

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::uint64_t plus_one(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v) + 1; }
std::int64_t minus_one(std::uint64_t v) { return v == 0 ? -1 : static_cast<std::int64_t>(v - 1); }

std::uint32_t get_u32(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

void write_record(core::detail::ByteWriter& w, const HistoryRecord& r) {
  w.varint(r.id);
  w.varint(static_cast<std::uint64_t>(r.wall_ms));
  w.varint(r.log_index);
  w.varint(r.log_ms);
  w.u8(static_cast<std::uint8_t>(r.event.kind));
  w.bytes(r.event.lock);
  w.varint(r.event.session);
  w.bytes(r.event.owner);
  w.varint(r.event.token);
  w.bytes(r.event.reason);
  w.varint(plus_one(r.event.wait_ms));
  w.varint(plus_one(r.event.hold_ms));
  w.varint(static_cast<std::uint64_t>(r.event.delay_ms));
}

// Appends [u32 length][u32 crc32][payload] to `out`, encoding the payload in
// place (no temporary string per record).
void append_frame(std::string& out, const HistoryRecord& record) {
  const std::size_t head = out.size();
  out.append(8, '\0');  // the length and crc, once the payload is there
  core::detail::ByteWriter w(std::move(out));
  write_record(w, record);
  out = w.take();
  const std::string_view payload = std::string_view(out).substr(head + 8);
  const std::uint32_t length = static_cast<std::uint32_t>(payload.size());
  const std::uint32_t crc = log::crc32_update(0, payload);
  for (int i = 0; i < 4; ++i) {
    out[head + i] = static_cast<char>((length >> (8 * i)) & 0xff);
    out[head + 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  }
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::string encode_history_record(const HistoryRecord& r) {
  core::detail::ByteWriter w;
  write_record(w, r);
  return w.take();
}

Result<HistoryRecord> decode_history_record(std::string_view bytes) {
  core::detail::ByteReader in(bytes);
  HistoryRecord r;
  r.id = in.varint();
  r.wall_ms = static_cast<std::int64_t>(in.varint());
  r.log_index = in.varint();
  r.log_ms = in.varint();
  const std::uint8_t kind = in.u8();
  r.event.kind = static_cast<AuditKind>(kind);
  r.event.lock = in.bytes(kMaxField);
  r.event.session = in.varint();
  r.event.owner = in.bytes(kMaxField);
  r.event.token = in.varint();
  r.event.reason = in.bytes(kMaxField);
  r.event.cause = audit_cause_of(r.event.reason);
  r.event.wait_ms = minus_one(in.varint());
  r.event.hold_ms = minus_one(in.varint());
  r.event.delay_ms = static_cast<std::int64_t>(in.varint());
  if (!in.ok() || !in.at_end() || kind > kAuditKindMax || r.id == 0) {
    return Status(ErrorCode::kCorruption, "malformed history record");
  }
  return r;
}

HistoryStore::HistoryStore(HistoryOptions options)
    : options_(std::move(options)), old_path_(options_.path + ".old") {
  if (options_.max_entries == 0) options_.max_entries = 1;
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::open(const HistoryOptions& options) {
  std::unique_ptr<HistoryStore> store(new HistoryStore(options));
  if (Status st = store->load(); !st) return st;
  store->sync_thread_ = std::thread([s = store.get()] { s->sync_loop(); });
  return store;
}

HistoryStore::~HistoryStore() {
  flush();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
  sync_retired(std::exchange(retired_, {}));
  if (fd_ >= 0) {
    if (::fdatasync(fd_) != 0) {
      spdlog::warn("audit history: {}", errno_text("cannot sync history file", options_.path));
    }
    ::close(fd_);
  }
}

namespace {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

Result<HistorySegment> parse_history_segment(const std::string& path, std::string_view data) {
  HistorySegment seg;
  if (data.empty()) return seg;
  if (data.size() < kMagic.size() || data.substr(0, kMagic.size()) != kMagic) {
    return Status(ErrorCode::kCorruption, "history file " + path + " does not start with the history header");
  }
  std::size_t pos = kMagic.size();
  seg.good = pos;
  while (data.size() - pos >= 8) {
    const std::uint32_t len = get_u32(data.substr(pos, 4));
    const std::uint32_t crc = get_u32(data.substr(pos + 4, 4));
    if (len > kMaxRecordBytes || data.size() - pos - 8 < len) break;
    const std::string_view payload = data.substr(pos + 8, len);
    if (log::crc32_update(0, payload) != crc) break;
    auto record = decode_history_record(payload);
    if (!record) break;
    seg.records.push_back(std::move(record).value());
    pos += 8 + len;
    seg.good = pos;
  }
  seg.torn = seg.good < data.size();
  return seg;
}

Status HistoryStore::load() {
  const std::string& path = options_.path;
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  // The previous segment is read only; its torn tail (a power loss before
  // its background sync) is skipped, not cut.
  auto old = parse_history_segment(old_path_, read_whole_file(old_path_));
  if (!old) return old.status();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status(ErrorCode::kIoError, errno_text("cannot open history file", path));
  const std::string data = read_whole_file(path);
  auto current = parse_history_segment(path, data);
  if (!current) return current.status();
  dropped_at_open_ = (old->torn ? 1 : 0) + (current->torn ? 1 : 0);
  records_in_file_ = current->records.size();

  std::vector<HistoryRecord> all = std::move(old->records);
  all.insert(all.end(), std::make_move_iterator(current->records.begin()),
             std::make_move_iterator(current->records.end()));
  // Ids increase through the old segment and on into the current one; a
  // power loss can only leave gaps. Sort anyway, so nothing else is assumed.
  const auto by_id = [](const HistoryRecord& a, const HistoryRecord& b) { return a.id < b.id; };
  if (!std::is_sorted(all.begin(), all.end(), by_id)) std::stable_sort(all.begin(), all.end(), by_id);
  all.erase(std::unique(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id == b.id; }),
            all.end());
  const std::size_t keep = std::min(all.size(), options_.max_entries);
  ring_.assign(std::make_move_iterator(all.end() - static_cast<std::ptrdiff_t>(keep)),
               std::make_move_iterator(all.end()));
  if (!all.empty()) next_id_ = all.back().id + 1;

  std::size_t good = current->good;
  if (good == 0) {
    if (::ftruncate(fd_, 0) != 0 || !write_all(fd_, kMagic)) {
      return Status(ErrorCode::kIoError, errno_text("cannot write history file", path));
    }
    good = kMagic.size();
  } else if (good < data.size() && ::ftruncate(fd_, static_cast<off_t>(good)) != 0) {
    return Status(ErrorCode::kIoError, errno_text("cannot cut the torn tail of history file", path));
  }
  if (::lseek(fd_, static_cast<off_t>(good), SEEK_SET) < 0) {
    return Status(ErrorCode::kIoError, errno_text("cannot seek history file", path));
  }
  if (::fdatasync(fd_) != 0) return Status(ErrorCode::kIoError, errno_text("cannot sync history file", path));
  // A smaller --history-max-entries than the file was written with.
  if (records_in_file_ >= options_.max_entries) rotate();
  return Status::ok();
}

const HistoryRecord& HistoryStore::append(std::int64_t wall_ms, log::LogIndex index, core::LogMillis log_ms,
                                          AuditEvent event) {
  HistoryRecord r;
  r.id = next_id_++;
  r.wall_ms = wall_ms;
  r.log_index = index;
  r.log_ms = log_ms;
  r.event = std::move(event);
  append_frame(pending_, r);
  ++pending_records_;
  ring_.push_back(std::move(r));
  if (ring_.size() > options_.max_entries) ring_.pop_front();
  // A full segment becomes the old one: write what it still gets, then start
  // a new file. Each file holds at most max_entries records.
  if (records_in_file_ + pending_records_ >= options_.max_entries) {
    write_pending();
    if (records_in_file_ >= options_.max_entries) rotate();
  }
  return ring_.back();
}

void HistoryStore::write_pending() {
  const std::size_t records = std::exchange(pending_records_, 0);
  const bool written = fd_ >= 0 && write_all(fd_, pending_);
  pending_.clear();
  if (!written) {
    write_errors_ += records;
    return;
  }
  records_in_file_ += records;
  bool was_dirty = false;
  {
    std::lock_guard lock(mu_);
    was_dirty = std::exchange(dirty_, true);
  }
  // Only the first write after a sync wakes the sync thread: it waits out
  // the interval on stop_ alone, so a wake per write only cost a futex call
  // and a context switch each: 15% of the server's CPU per W1 command.
  if (!was_dirty) cv_.notify_one();
}

void HistoryStore::rotate() {
  const std::string& path = options_.path;
  // After a failed start of a new file the current fd already names the old
  // segment; only the new file is still to be made.
  if (!current_is_old_ && ::rename(path.c_str(), old_path_.c_str()) != 0) {
    ++write_errors_;
    // Logged once per run of failures: a retry follows every append.
    if (!std::exchange(rotate_failing_, true)) {
      spdlog::warn("audit history: cannot rename {} to {}: {} (the file grows until a later try works)", path,
                   old_path_, std::strerror(errno));
    }
    return;
  }
  current_is_old_ = true;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0 && !write_all(fd, kMagic)) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) {
    ++write_errors_;
    if (!std::exchange(rotate_failing_, true)) {
      spdlog::warn("audit history: {} (records go on into {})", errno_text("cannot start history file", path),
                   old_path_);
    }
    return;
  }
  if (std::exchange(rotate_failing_, false)) spdlog::info("audit history: started {} again", path);
  current_is_old_ = false;
  records_in_file_ = 0;
  bool was_dirty = false;
  {
    std::lock_guard lock(mu_);
    if (fd_ >= 0) retired_.push_back(fd_);
    fd_ = fd;
    was_dirty = std::exchange(dirty_, true);
  }
  if (!was_dirty) cv_.notify_one();
}

void HistoryStore::sync_retired(std::vector<int> fds) {
  if (fds.empty()) return;
  for (const int fd : fds) {
    if (options_.sync_file(fd) != 0) {
      sync_errors_.fetch_add(1);
      spdlog::warn("audit history: {}", errno_text("cannot sync history file", old_path_));
    }
    ::close(fd);
  }
  // The renames and the new file's entry.
  const auto dir = std::filesystem::path(options_.path).parent_path();
  if (int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    if (::fsync(dfd) != 0) sync_errors_.fetch_add(1);
    ::close(dfd);
  }
}

void HistoryStore::sync_loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait(lock, [&] { return stop_ || dirty_; });
    if (stop_) return;
    // Wait out the interval (so a burst costs one sync), then sync a dup of
    // the current fd and the retired segments outside the lock: appends are
    // not blocked by the sync.
    cv_.wait_for(lock, options_.sync_interval, [&] { return stop_; });
    dirty_ = false;
    const int fd = fd_ >= 0 ? ::dup(fd_) : -1;
    std::vector<int> retired = std::exchange(retired_, {});
    lock.unlock();
    sync_retired(std::move(retired));
    if (fd >= 0) {
      if (options_.sync_file(fd) != 0) {
        sync_errors_.fetch_add(1);
        spdlog::warn("audit history: {}", errno_text("cannot sync history file", options_.path));
      }
      ::close(fd);
    }
    lock.lock();
  }
}

std::vector<HistoryRecord> HistoryStore::query(bool filter_lock, std::string_view lock, std::size_t count,
                                               std::uint64_t before_id) const {
  std::vector<HistoryRecord> out;
  for (auto it = ring_.rbegin(); it != ring_.rend() && out.size() < count; ++it) {
    if (before_id != 0 && it->id >= before_id) continue;
    if (filter_lock && it->event.lock != lock) continue;
    out.push_back(*it);
  }
  return out;
}

}  // namespace leasehold::server
