// fence/file_writer.cc: FencedFileWriter (token check, temp file, rename).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "fence/token_file.h"
#include "leasehold/fence_file.h"

namespace leasehold::fence {
namespace {

using detail::io_error;
using detail::LockedTokenFile;
using detail::LockMode;

Status validate_path(const std::string& path) {
  if (path.empty()) return Status(ErrorCode::kInvalidArgument, "fenced file path is empty");
  if (path.back() == '/') {
    return Status(ErrorCode::kInvalidArgument, "fenced file path ends in '/': " + path);
  }
  return Status::ok();
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Writes all of `bytes` to a fresh (truncated) `path` and fsyncs it.
Status write_synced(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("create temp file", path, errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = io_error("write temp file", path, errno);
      ::close(fd);
      return s;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Status s = io_error("fsync temp file", path, errno);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return io_error("close temp file", path, errno);
  return Status::ok();
}

}  // namespace

std::string FencedFileWriter::fence_path(const std::string& path) { return path + ".fence"; }

std::string FencedFileWriter::temp_path(const std::string& path) {
  std::filesystem::path p(path);
  std::string name = "." + p.filename().string() + ".fence-tmp";
  return (p.parent_path() / name).string();
}

Status FencedFileWriter::write(const std::string& path, Token token, std::string_view bytes) const {
  if (Status s = validate_path(path); !s) return s;
  if (bytes.size() > options_.max_bytes) {
    return Status(ErrorCode::kLimitExceeded, "fenced write of " + std::to_string(bytes.size()) +
                                                 " bytes exceeds the limit of " +
                                                 std::to_string(options_.max_bytes));
  }
  Result<LockedTokenFile> fence = LockedTokenFile::open(fence_path(path), LockMode::kExclusive,
                                                        /*create=*/true, options_.lock_timeout);
  if (!fence) return fence.status();
  Result<std::optional<Token>> current = fence->read();
  if (!current) return current.status();
  if (current->has_value() && token < **current) {
    return Admission{false, **current}.to_status(path, token);
  }
  const std::string temp = temp_path(path);
  const std::string dir = directory_of(path);
  if (Status s = write_synced(temp, bytes); !s) {
    ::unlink(temp.c_str());
    return s;
  }
  if (!current->has_value() || token > **current) {
    if (Status s = fence->write(token); !s) return s;
  }
  // The token record (maybe a new file) must be durable before the new bytes
  // can become visible, or a crash could leave new bytes without their token.
  if (Status s = detail::fsync_directory(dir); !s) return s;
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Status s = io_error("rename temp file onto", path, errno);
    ::unlink(temp.c_str());
    return s;
  }
  return detail::fsync_directory(dir);
}

Result<std::optional<Token>> FencedFileWriter::highest(const std::string& path) const {
  if (Status s = validate_path(path); !s) return s;
  Result<LockedTokenFile> fence = LockedTokenFile::open(fence_path(path), LockMode::kShared,
                                                        /*create=*/false, options_.lock_timeout);
  if (!fence) {
    if (fence.status().code() == ErrorCode::kNotFound) return std::optional<Token>();
    return fence.status();
  }
  return fence->read();
}

}  // namespace leasehold::fence
