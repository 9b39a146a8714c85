// server/data_dir_lock.cc: see the header.
#include "server/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "log/durable_file.h"

namespace leasehold::server {
namespace {

// The pid written in the lock file by its holder ("" when unreadable).
std::string holder_pid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

// Creates `dir` and its missing parents, and makes each new directory's
// entry durable in its parent: without that, a power cut could drop a new
// data dir whole, and the next start would take it for a new one (its
// revision record gone with it, tokens would start again at 1).
Status create_durably(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> missing;  // deepest first
  for (fs::path p = fs::absolute(dir, ec); !ec && !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, "cannot create data dir " + dir + ": " + ec.message());
  for (const fs::path& created : missing) {
    if (Status st = log::sync_directory(created.parent_path().string()); !st) {
      return Status(ErrorCode::kIoError, "cannot make data dir " + dir + " durable: " + st.message());
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<DataDirLock>> DataDirLock::acquire(const std::string& dir) {
  if (Status st = create_durably(dir); !st) return st;
  const std::string path = dir + "/leasehold.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status(ErrorCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = holder_pid(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status(ErrorCode::kUnavailable, "another leasehold server is using " + dir + " (" +
                                                 (pid.empty() ? std::string("a process") : "pid " + pid) +
                                                 " holds " + path + "); stop it or use another --data-dir");
    }
    return Status(ErrorCode::kIoError, "cannot lock " + path + ": " + std::strerror(err));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  // A failure loses only the pid shown to a person; the lock itself is held.
  [[maybe_unused]] const bool noted = ::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) > 0;
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

DataDirLock::~DataDirLock() { ::close(fd_); }

}  // namespace leasehold::server
