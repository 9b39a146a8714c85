#include "log/entry_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "common/assert.h"
#include "log/durable_file.h"
#include "log/log_format.h"

namespace leasehold::log {
namespace {

constexpr std::string_view kHeaderMagic = "LHJRNL01";
constexpr std::string_view kRecordMagic = "LHJR";
constexpr std::size_t kJournalHeaderBytes = 36;  // magic, generation, nonce, start, crc
constexpr std::size_t kFirstRecordOffset = 2 * EntryJournal::kBlockBytes;

std::size_t round_up_to_blocks(std::size_t n) {
  return (n + EntryJournal::kBlockBytes - 1) / EntryJournal::kBlockBytes * EntryJournal::kBlockBytes;
}

std::size_t record_bytes(std::size_t payload_bytes) {
  return round_up_to_blocks(EntryJournal::kRecordHeaderBytes + payload_bytes);
}

Status pwrite_all(int fd, std::string_view bytes, std::size_t offset, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

std::uint64_t random_nonce() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

std::string encode_journal_header(std::uint64_t generation, std::uint64_t nonce, LogIndex start) {
  std::string h(kHeaderMagic);
  put_u64_le(h, generation);
  put_u64_le(h, nonce);
  put_u64_le(h, start);
  put_u32_le(h, crc32_update(0, h));
  h.resize(EntryJournal::kBlockBytes, '\0');
  return h;
}

namespace {

struct Header {
  std::uint64_t generation = 0;
  std::uint64_t nonce = 0;
  LogIndex start = 0;
};

std::optional<Header> decode_header(std::string_view block) {
  if (block.size() < kJournalHeaderBytes || block.substr(0, 8) != kHeaderMagic) return std::nullopt;
  if (get_u32_le(block.substr(32)) != crc32_update(0, block.substr(0, 32))) return std::nullopt;
  return Header{get_u64_le(block.substr(8)), get_u64_le(block.substr(16)), get_u64_le(block.substr(24))};
}

std::uint32_t record_crc(std::uint64_t nonce, std::string_view index_length, std::string_view payload) {
  std::string n;
  put_u64_le(n, nonce);
  return crc32_update(crc32_update(crc32_update(0, n), index_length), payload);
}

// The record at `offset` of `file` if it is a valid record of this
// generation: {index, payload}.
std::optional<std::pair<LogIndex, std::string_view>> decode_record(std::string_view file, std::size_t offset,
                                                                   std::uint64_t nonce) {
  if (offset + EntryJournal::kRecordHeaderBytes > file.size()) return std::nullopt;
  const std::string_view head = file.substr(offset, EntryJournal::kRecordHeaderBytes);
  if (head.substr(0, 4) != kRecordMagic) return std::nullopt;
  const std::uint32_t length = get_u32_le(head.substr(16));
  if (length > file.size() - offset - EntryJournal::kRecordHeaderBytes) return std::nullopt;
  const std::string_view payload = file.substr(offset + EntryJournal::kRecordHeaderBytes, length);
  if (get_u32_le(head.substr(4)) != record_crc(nonce, head.substr(8, 12), payload)) return std::nullopt;
  return std::make_pair(get_u64_le(head.substr(8)), payload);
}

Status create_journal_file(const std::string& path, std::size_t size, LogIndex start) {
  return replace_file_durably_with(path, [&](int fd, const std::string& tmp) {
    // Every block is written (not fallocated): later in-place writes then
    // change no extent, so their fdatasync writes data only.
    Status st = Status::ok();
    const std::string zeros(1u << 20, '\0');
    for (std::size_t off = 0; st && off < size; off += zeros.size()) {
      st = pwrite_all(fd, std::string_view(zeros).substr(0, std::min(zeros.size(), size - off)), off, tmp);
    }
    // Generation 1 lives in slot 1 (generation % 2), as restart() would put it.
    if (st) st = pwrite_all(fd, encode_journal_header(1, random_nonce(), start), EntryJournal::kBlockBytes, tmp);
    return st;
  });
}

}  // namespace

Result<std::unique_ptr<EntryJournal>> EntryJournal::open(const std::string& path, std::size_t bytes,
                                                         LogIndex start_if_created) {
  std::error_code ec;
  std::filesystem::remove(path + ".tmp", ec);
  const bool created = !std::filesystem::exists(path, ec);
  if (created) {
    if (Status st = create_journal_file(
            path, std::clamp(round_up_to_blocks(bytes), 3 * kBlockBytes, kMaxBytes), start_if_created);
        !st) {
      return st;
    }
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return io_error("open", path);
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    const Status st = io_error("stat", path);
    ::close(fd);
    return st;
  }
  std::unique_ptr<EntryJournal> journal(new EntryJournal(path, fd, static_cast<std::size_t>(sb.st_size)));
  if (journal->size_ > kMaxBytes) {  // read whole at open: a bound on that
    return Status(ErrorCode::kCorruption, path + ": " + std::to_string(journal->size_) + " bytes is over the " +
                                              std::to_string(kMaxBytes) + " a journal may have");
  }
  if (Status st = journal->recover(); !st) return st;
  return journal;
}

EntryJournal::EntryJournal(std::string path, int fd, std::size_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

EntryJournal::~EntryJournal() {
  if (fd_ >= 0) ::close(fd_);
}

Result<ParsedJournal> parse_entry_journal(std::string_view all, const std::string& name) {
  constexpr std::size_t kBlockBytes = EntryJournal::kBlockBytes;
  if (all.size() % kBlockBytes != 0 || all.size() < 3 * kBlockBytes) {
    return Status(ErrorCode::kCorruption, name + ": " + std::to_string(all.size()) +
                                              " bytes is not a whole number of at least 3 blocks of " +
                                              std::to_string(kBlockBytes));
  }
  const std::optional<Header> a = decode_header(all.substr(0, kBlockBytes));
  const std::optional<Header> b = decode_header(all.substr(kBlockBytes, kBlockBytes));
  if (!a && !b) return Status(ErrorCode::kCorruption, name + ": neither header block is valid");
  const Header h = !b || (a && a->generation > b->generation) ? *a : *b;
  ParsedJournal out;
  out.generation = h.generation;
  out.nonce = h.nonce;
  out.start_index = h.start;
  out.next_offset = kFirstRecordOffset;
  LogIndex next_index = h.start;
  while (auto record = decode_record(all, out.next_offset, h.nonce)) {
    if (record->first != next_index) break;
    out.entries.emplace_back(record->first, std::string(record->second));
    out.next_offset += record_bytes(record->second.size());
    ++next_index;
  }
  // Nothing of this generation may follow the end: that would be an
  // acknowledged record behind damage.
  for (std::size_t off = out.next_offset; off < all.size(); off += kBlockBytes) {
    if (auto later = decode_record(all, off, h.nonce)) {
      return Status(ErrorCode::kCorruption,
                    name + ": the record at offset " + std::to_string(out.next_offset) + " (entry " +
                        std::to_string(next_index) + ") is damaged, and entry " +
                        std::to_string(later->first) + " follows it at offset " + std::to_string(off));
    }
  }
  return out;
}

std::string encode_journal_record(std::uint64_t nonce, LogIndex index, std::string_view payload) {
  std::string out(kRecordMagic);
  put_u32_le(out, 0);  // the crc, below
  put_u64_le(out, index);
  put_u32_le(out, static_cast<std::uint32_t>(payload.size()));
  const std::uint32_t crc = record_crc(nonce, std::string_view(out).substr(8, 12), payload);
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  out.append(payload);
  out.resize(record_bytes(payload.size()), '\0');
  return out;
}

Status EntryJournal::recover() {
  std::string file(size_, '\0');
  std::size_t got = 0;
  while (got < size_) {
    const ssize_t n = ::pread(fd_, file.data() + got, size_ - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("read", path_);
    if (n == 0) return Status(ErrorCode::kIoError, "read " + path_ + ": ended early");
    got += static_cast<std::size_t>(n);
  }
  auto parsed = parse_entry_journal(file, path_);
  if (!parsed) return parsed.status();
  generation_ = parsed->generation;
  nonce_ = parsed->nonce;
  next_index_ = parsed->start_index + parsed->entries.size();
  next_offset_ = parsed->next_offset;
  recovered_.start_index = parsed->start_index;
  recovered_.entries = std::move(parsed->entries);
  return Status::ok();
}

bool EntryJournal::fits(std::size_t payload_bytes) const {
  return payload_bytes <= size_ && next_offset_ + record_bytes(payload_bytes) <= size_;
}

bool EntryJournal::fits_when_empty(std::size_t payload_bytes) const {
  return payload_bytes <= size_ && kFirstRecordOffset + record_bytes(payload_bytes) <= size_;
}

Status EntryJournal::append(LogIndex index, std::string_view payload, bool sync) {
  LEASEHOLD_ASSERT(index == next_index_, "journal append of entry {} where entry {} is next", index, next_index_);
  LEASEHOLD_ASSERT(fits(payload.size()), "journal append of {} bytes that do not fit", payload.size());
  const std::string record = encode_journal_record(nonce_, index, payload);
  if (Status st = pwrite_all(fd_, record, next_offset_, path_); !st) return st;
  if (sync && ::fdatasync(fd_) != 0) return io_error("fdatasync", path_);
  next_offset_ += record.size();
  ++next_index_;
  return Status::ok();
}

Status EntryJournal::restart(LogIndex start_index) {
  const std::uint64_t generation = generation_ + 1;
  const std::uint64_t nonce = random_nonce();
  const std::size_t slot = (generation % 2) * kBlockBytes;
  if (Status st = pwrite_all(fd_, encode_journal_header(generation, nonce, start_index), slot, path_); !st) return st;
  if (::fdatasync(fd_) != 0) return io_error("fdatasync", path_);
  generation_ = generation;
  nonce_ = nonce;
  next_index_ = start_index;
  next_offset_ = kFirstRecordOffset;
  return Status::ok();
}

}  // namespace leasehold::log
