// torture/faults/fault_fs_journal.cc: see fault_fs_journal.h.
#include "torture/faults/fault_fs_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace leasehold::torture::fault_fs {

Journal::~Journal() {
  for (auto& [key, f] : files_) ::close(f.fd);
}

Journal::File* Journal::file(int fd, off_t* size) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
  *size = st.st_size;
  auto [it, added] = files_.try_emplace({st.st_dev, st.st_ino});
  if (added) {
    // A read-write descriptor of its own (the caller's may be write-only):
    // reopened through /proc, which works for an unlinked file too.
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    it->second.fd = ::open(self.c_str(), O_RDWR | O_CLOEXEC);
    it->second.synced_size = st.st_size;
  }
  return &it->second;
}

// Saves the bytes of [off, off + len) that exist now (below `size`).
int Journal::save(File& f, off_t size, off_t off, off_t len) {
  const off_t end = std::min(size, off + len);
  if (off >= end) return 0;
  Undo u{off, std::string(static_cast<std::size_t>(end - off), '\0')};
  std::size_t done = 0;
  while (done < u.old.size()) {
    const ssize_t n = ::pread(f.fd, u.old.data() + done, u.old.size() - done, off + static_cast<off_t>(done));
    if (n < 0) return -errno;  // (also when the reopen above failed: EBADF)
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  u.old.resize(done);
  f.undo.push_back(std::move(u));
  return 0;
}

int Journal::before_write(int fd, off_t off, std::size_t len) {
  std::lock_guard lock(mu_);
  off_t size = 0;
  File* f = file(fd, &size);
  return f == nullptr ? 0 : save(*f, size, off, static_cast<off_t>(len));
}

int Journal::before_truncate(int fd, off_t new_size) {
  std::lock_guard lock(mu_);
  off_t size = 0;
  File* f = file(fd, &size);
  return f == nullptr || new_size >= size ? 0 : save(*f, size, new_size, size - new_size);
}

int Journal::before_punch(int fd, off_t off, off_t len) {
  std::lock_guard lock(mu_);
  off_t size = 0;
  File* f = file(fd, &size);
  return f == nullptr ? 0 : save(*f, size, off, len);
}

void Journal::synced(int fd) {
  std::lock_guard lock(mu_);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  auto it = files_.find({st.st_dev, st.st_ino});
  if (it == files_.end()) return;
  // Durable as it is: forget it (the next change starts a new entry at
  // this size).
  ::close(it->second.fd);
  files_.erase(it);
}

CutReport Journal::cut() {
  std::lock_guard lock(mu_);
  CutReport r;
  for (auto& [key, f] : files_) {
    struct stat st {};
    bool ok = ::fstat(f.fd, &st) == 0;
    if (ok && st.st_size > f.synced_size) r.dropped += static_cast<std::uint64_t>(st.st_size - f.synced_size);
    for (auto u = f.undo.rbegin(); ok && u != f.undo.rend(); ++u) {
      ok = ::pwrite(f.fd, u->old.data(), u->old.size(), u->off) == static_cast<ssize_t>(u->old.size());
      r.dropped += u->old.size();
    }
    ok = ok && ::ftruncate(f.fd, f.synced_size) == 0 && ::fsync(f.fd) == 0;
    r.files += 1;
    r.errors += ok ? 0 : 1;
    ::close(f.fd);
  }
  files_.clear();
  return r;
}

}  // namespace leasehold::torture::fault_fs
