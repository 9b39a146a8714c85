#include "log/snapshot_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include "log/log_format.h"

namespace leasehold::log {
namespace {

constexpr std::string_view kMagic = "LHSNAP01";
constexpr std::size_t kHeaderBytes = 8 + 8 + 8 + 4;
constexpr std::string_view kPrefix = "snapshot-";
constexpr std::string_view kSuffix = ".bin";
constexpr std::size_t kDigits = 20;

Status io_error(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(errno));
}

Status write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::ok();
}

std::uint32_t snapshot_crc(std::string_view index_and_length, std::string_view payload) {
  return crc32_update(crc32_update(0, index_and_length), payload);
}

}  // namespace

std::string snapshot_path(const std::string& dir, LogIndex index) {
  char name[64];
  std::snprintf(name, sizeof name, "snapshot-%020llu.bin", static_cast<unsigned long long>(index));
  return dir + "/" + name;
}

Status sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("open directory", dir);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) return io_error("fsync directory", dir);
  return Status::ok();
}

Status write_snapshot_file(const std::string& dir, LogIndex index, std::string_view bytes) {
  const std::string path = snapshot_path(dir, index);
  const std::string tmp = path + ".tmp";
  std::string header(kMagic);
  std::string fields;
  put_u64_le(fields, index);
  put_u64_le(fields, bytes.size());
  header += fields;
  put_u32_le(header, snapshot_crc(fields, bytes));

  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create", tmp);
  Status st = write_all(fd, header, tmp);
  if (st) st = write_all(fd, bytes, tmp);
  if (st && ::fsync(fd) != 0) st = io_error("fsync", tmp);
  if (::close(fd) != 0 && st) st = io_error("close", tmp);
  if (st && ::rename(tmp.c_str(), path.c_str()) != 0) st = io_error("rename to " + path, tmp);
  if (!st) {
    ::unlink(tmp.c_str());
    return st;
  }
  return sync_directory(dir);
}

Result<Snapshot> read_snapshot_file(const std::string& path, LogIndex expected_index) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("open", path);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const Status st = io_error("read", path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  const auto corrupt = [&](const std::string& why) {
    return Status(ErrorCode::kCorruption, "snapshot file " + path + ": " + why);
  };
  if (data.size() < kHeaderBytes) return corrupt("truncated header");
  const std::string_view view(data);
  if (view.substr(0, 8) != kMagic) return corrupt("bad magic");
  const LogIndex index = get_u64_le(view.substr(8, 8));
  const std::uint64_t length = get_u64_le(view.substr(16, 8));
  const std::uint32_t stored_crc = get_u32_le(view.substr(24, 4));
  if (length != data.size() - kHeaderBytes) {
    return corrupt("length field " + std::to_string(length) + " but " +
                   std::to_string(data.size() - kHeaderBytes) + " payload bytes");
  }
  if (stored_crc != snapshot_crc(view.substr(8, 16), view.substr(kHeaderBytes))) {
    return corrupt("checksum mismatch");
  }
  if (index != expected_index) {
    return corrupt("holds index " + std::to_string(index) + ", name says " +
                   std::to_string(expected_index));
  }
  Snapshot snap;
  snap.index = index;
  snap.bytes = data.substr(kHeaderBytes);
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
