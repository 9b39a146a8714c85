#include "log/snapshot_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "log/durable_file.h"
#include "log/log_format.h"

namespace leasehold::log {
namespace {

constexpr std::string_view kSnapshotMagic = "LHSNAP01";
constexpr std::size_t kSnapshotHeaderBytes = 8 + 8 + 8 + 4;
constexpr std::string_view kPrefix = "snapshot-";
constexpr std::string_view kSuffix = ".bin";
constexpr std::size_t kDigits = 20;

std::uint32_t snapshot_crc(std::string_view index_and_length, std::string_view payload) {
  return crc32_update(crc32_update(0, index_and_length), payload);
}

std::string header_fields(LogIndex index, std::uint64_t length) {
  std::string fields;
  put_u64_le(fields, index);
  put_u64_le(fields, length);
  return fields;
}

}  // namespace

std::string snapshot_path(const std::string& dir, LogIndex index) {
  char name[64];
  std::snprintf(name, sizeof name, "snapshot-%020llu.bin", static_cast<unsigned long long>(index));
  return dir + "/" + name;
}

Status write_snapshot_file(const std::string& dir, LogIndex index, std::string_view bytes) {
  const std::string path = snapshot_path(dir, index);
  std::string header(kSnapshotMagic);
  const std::string fields = header_fields(index, bytes.size());
  header += fields;
  put_u32_le(header, snapshot_crc(fields, bytes));

  std::string image = header;
  image.append(bytes);
  return replace_file_durably(path, image);
}

Result<std::unique_ptr<SnapshotFileWriter>> SnapshotFileWriter::create(const std::string& dir, LogIndex index) {
  std::string path = snapshot_path(dir, index);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create", tmp);
  std::unique_ptr<SnapshotFileWriter> writer(new SnapshotFileWriter(std::move(path), index, fd));
  // The header's place; finish() writes it.
  if (Status st = writer->append(std::string(kSnapshotHeaderBytes, '\0')); !st) return st;
  writer->length_ = 0;
  writer->payload_crc_ = 0;
  return writer;
}

SnapshotFileWriter::SnapshotFileWriter(std::string path, LogIndex index, int fd)
    : path_(std::move(path)), index_(index), fd_(fd) {}

SnapshotFileWriter::~SnapshotFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!path_.empty()) ::unlink((path_ + ".tmp").c_str());
}

Status SnapshotFileWriter::append(std::string_view bytes) {
  if (!failed_) return failed_;
  const std::string tmp = path_ + ".tmp";
  std::string_view left = bytes;
  while (!left.empty()) {
    const ssize_t n = ::write(fd_, left.data(), left.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = io_error("write", tmp);
      return failed_;
    }
    left.remove_prefix(static_cast<std::size_t>(n));
  }
  length_ += bytes.size();
  payload_crc_ = crc32_update(payload_crc_, bytes);
  return Status::ok();
}

Status SnapshotFileWriter::finish() {
  if (!failed_) return failed_;
  const std::string tmp = path_ + ".tmp";
  const std::string fields = header_fields(index_, length_);
  std::string header(kSnapshotMagic);
  header += fields;
  const uLong crc = ::crc32_combine(crc32_update(0, fields), payload_crc_, static_cast<z_off_t>(length_));
  put_u32_le(header, static_cast<std::uint32_t>(crc));
  std::string_view left = header;
  off_t at = 0;
  while (!left.empty()) {
    const ssize_t n = ::pwrite(fd_, left.data(), left.size(), at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return failed_ = io_error("write header of", tmp);
    }
    left.remove_prefix(static_cast<std::size_t>(n));
    at += n;
  }
  if (::fsync(fd_) != 0) return failed_ = io_error("fsync", tmp);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return failed_ = io_error("close", tmp);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return failed_ = io_error("rename to " + path_, tmp);
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  path_.clear();  // renamed: nothing to remove
  return sync_directory(dir.empty() ? "." : dir);
}

Result<Snapshot> read_snapshot_file(const std::string& path, LogIndex expected_index) {
  auto read = read_whole_file(path);
  if (!read) return read.status();
  const std::string data = std::move(read).value();
  const auto corrupt = [&](const std::string& why) {
    return Status(ErrorCode::kCorruption, "snapshot file " + path + ": " + why);
  };
  if (data.size() < kSnapshotHeaderBytes) return corrupt("truncated header");
  const std::string_view view(data);
  if (view.substr(0, 8) != kSnapshotMagic) return corrupt("bad magic");
  const LogIndex index = get_u64_le(view.substr(8, 8));
  const std::uint64_t length = get_u64_le(view.substr(16, 8));
  const std::uint32_t stored_crc = get_u32_le(view.substr(24, 4));
  if (length != data.size() - kSnapshotHeaderBytes) {
    return corrupt("length field " + std::to_string(length) + " but " +
                   std::to_string(data.size() - kSnapshotHeaderBytes) + " payload bytes");
  }
  if (stored_crc != snapshot_crc(view.substr(8, 16), view.substr(kSnapshotHeaderBytes))) {
    return corrupt("checksum mismatch");
  }
  if (index != expected_index) {
    return corrupt("holds index " + std::to_string(index) + ", name says " +
                   std::to_string(expected_index));
  }
  Snapshot snap;
  snap.index = index;
  snap.bytes = data.substr(kSnapshotHeaderBytes);
  return snap;
}

Result<std::vector<SnapshotFileName>> list_snapshot_files(const std::string& dir, bool remove_temp) {
  std::vector<SnapshotFileName> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "list " + dir + ": " + ec.message());
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix)) continue;
    if (name.ends_with(".tmp")) {
      if (remove_temp) std::filesystem::remove(entry.path(), ec);
      continue;
    }
    if (!name.ends_with(kSuffix) || name.size() != kPrefix.size() + kDigits + kSuffix.size()) continue;
    const std::string digits = name.substr(kPrefix.size(), kDigits);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out.push_back({std::stoull(digits), entry.path().string()});
  }
  std::sort(out.begin(), out.end(),
            [](const SnapshotFileName& a, const SnapshotFileName& b) { return a.index < b.index; });
  return out;
}

}  // namespace leasehold::log
