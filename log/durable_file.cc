#include "log/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace leasehold::log {
namespace {

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

}  // namespace

Status io_error(const std::string& what, const std::string& path) {
  return Status(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(errno));
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

Status replace_file_durably(const std::string& path, std::string_view bytes) {
  return replace_file_durably_with(path, [&](int fd, const std::string& tmp) { return write_all(fd, bytes, tmp); });
}

Status replace_file_durably_with(const std::string& path,
                                 const std::function<Status(int fd, const std::string& tmp_path)>& write) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create", tmp);
  Status st = write(fd, tmp);
  if (st && ::fsync(fd) != 0) st = io_error("fsync", tmp);
  if (::close(fd) != 0 && st) st = io_error("close", tmp);
  if (st && ::rename(tmp.c_str(), path.c_str()) != 0) st = io_error("rename to " + path, tmp);
  if (!st) {
    ::unlink(tmp.c_str());
    return st;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  return sync_directory(dir.empty() ? "." : dir);
}

Result<std::string> read_whole_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status(ErrorCode::kNotFound, path + " does not exist");
    return io_error("open", path);
  }
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
  return data;
}

}  // namespace leasehold::log
