// torture/faults/disk_fault_shim_undo.cc: writes and syncs of journaled
// files (torture/faults/disk_fault_shim.h). Before a write changes bytes
// inside a file's durable range (its size at its last sync), the bytes are
// copied into this process's undo data file and an `undo` line pointing at
// them is journaled; a successful fsync/fdatasync journals `sync`, which
// voids them. The state is in disk_fault_shim_state.h.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "torture/faults/disk_fault_shim_internal.h"
#include "torture/faults/disk_fault_shim_state.h"

namespace leasehold::torture::disk_fault::detail {
namespace {

// Opens a new, empty undo data file "<journal>.undo.<pid>.<n>" (mu held):
// 0, or the errno.
int open_undo_data(Shim& s) {
  REAL(open);
  if (s.undo.fd >= 0) close_untracked(s.undo.fd);  // a forked child's copy of its parent's
  s.undo.fd = -1;
  s.undo.pid = getpid();
  s.undo.path.clear();
  s.undo.bytes = 0;  // `live` stays: the sum of the counts the child inherited
  for (int n = 1; n <= 1000; ++n) {
    const std::string path = s.journal + ".undo." + std::to_string(s.undo.pid) + "." + std::to_string(n);
    const int fd = real_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      s.undo.fd = fd;
      s.undo.path = path;
      return 0;
    }
    if (errno != EEXIST) return errno;
  }
  return EEXIST;
}

// Copies up to `length` bytes at `at` of fd's file to the end of the undo
// data file (mu held); *saved: how many (fewer when the file ends first).
// 0, or the errno. `flags`: the fd's status flags. A write-only (or
// O_DIRECT) fd is read through a new read-only fd of the same file.
int save_preimage(Shim& s, int fd, int flags, unsigned long long at, unsigned long long length,
                  unsigned long long* saved) {
  REAL(open);
  REAL(pwrite);
  *saved = 0;
  int src = fd;
  int own = -1;
  if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_DIRECT) != 0) {
    char link[64];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    own = real_open(link, O_RDONLY | O_CLOEXEC);
    if (own < 0) return errno;
    src = own;
  }
  char buf[65536];
  int err = 0;
  while (*saved < length) {
    const std::size_t want = static_cast<std::size_t>(std::min<unsigned long long>(sizeof buf, length - *saved));
    const ssize_t n = pread(src, buf, want, static_cast<off_t>(at + *saved));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    const auto got = static_cast<std::size_t>(n);
    const off_t to = static_cast<off_t>(s.undo.bytes + *saved);
    if (real_pwrite(s.undo.fd, buf, got, to) != n) {
      err = errno != 0 ? errno : EIO;
      break;
    }
    *saved += got;
  }
  if (own >= 0) close_untracked(own);
  return err;
}

// Journals an undo entry for the durable bytes of `f` that a write of
// `length` bytes at `offset` on `fd` would change (mu held). 0, or the errno
// that kept it from doing so.
int record_undo(Shim& s, int fd, File& f, long long offset, unsigned long long length) {
  REAL(fcntl);
  if (f.gone || length == 0 || s.journal.empty()) return 0;
  const int flags = real_fcntl(fd, F_GETFL);
  if (flags < 0) return 0;  // not an open fd: the real call fails by itself
  unsigned long long at = 0;
  if (offset == kAtEnd || (flags & O_APPEND) != 0) {
    struct stat st {};
    if (fstat(fd, &st) != 0) return errno;
    at = static_cast<unsigned long long>(st.st_size);
  } else if (offset == kAtPosition) {
    const off_t pos = lseek(fd, 0, SEEK_CUR);
    if (pos < 0) return 0;  // a pipe or the like: nothing durable to change
    at = static_cast<unsigned long long>(pos);
  } else {
    at = static_cast<unsigned long long>(offset);
  }
  if (at >= f.durable) return 0;
  if (s.undo.fd < 0 || s.undo.pid != getpid()) {
    if (const int e = open_undo_data(s)) return e;
  }
  unsigned long long saved = 0;
  if (const int e = save_preimage(s, fd, flags, at, std::min(length, f.durable - at), &saved)) return e;
  if (saved == 0) return 0;  // the file is shorter than its durable size (shrunk): nothing to keep
  const std::string line = "undo\t" + std::to_string(at) + "\t" + std::to_string(saved) + "\t" + f.path + "\t" +
                           s.undo.path + "\t" + std::to_string(s.undo.bytes) + "\n";
  if (!journal_line(s, line)) return EIO;
  s.undo.bytes += saved;
  ++f.pending;
  ++s.undo.live;
  return 0;
}

}  // namespace

int begin_write(int fd, long long offset, unsigned long long length, WriteHold& hold) {
  Shim& s = shim();
  if (!s.enabled) return 0;
  std::shared_ptr<File> file;
  {
    std::lock_guard lock(s.mu);
    auto it = s.fds.find(fd);
    if (it == s.fds.end()) return 0;
    const Faults& faults = current_faults(s);
    if (faults_apply(s, faults, it->second.path)) {
      if (faults.eio_write) return EIO;
      if (faults.enospc) return ENOSPC;
    }
    file = it->second.file;
  }
  if (!file) return 0;
  hold.gate = std::shared_lock(file->gate);
  hold.file = file;
  std::lock_guard lock(s.mu);
  return record_undo(s, fd, *file, offset, length);
}

// fsync/fdatasync: fail under eio-fsync; journal success, which voids the
// file's undo entries (a directory's: the entries of the files that renames
// into it replaced). The file's gate is held throughout.
int do_sync(int fd, int (*sync)(int)) {
  Shim& s = shim();
  if (sync_fault(fd)) {
    errno = EIO;
    return -1;
  }
  if (!s.enabled) return sync(fd);
  Tracked tracked;
  {
    std::lock_guard lock(s.mu);
    auto it = s.fds.find(fd);
    if (it == s.fds.end()) return sync(fd);
    tracked = it->second;
  }
  std::unique_lock<std::shared_mutex> gate;
  if (tracked.file) gate = std::unique_lock(tracked.file->gate);
  const int rc = sync(fd);
  if (rc != 0) return rc;
  std::lock_guard lock(s.mu);
  struct stat st {};
  if (tracked.dir) {
    journal(s, "dirsync", 0, tracked.path);
    if (auto it = s.orphans.find(tracked.path); it != s.orphans.end()) {
      const unsigned long long n = it->second;
      s.orphans.erase(it);
      release(s, n);
    }
  } else if (tracked.file && !tracked.file->gone && fstat(fd, &st) == 0) {
    File& f = *tracked.file;
    f.durable = static_cast<unsigned long long>(st.st_size);
    journal(s, "sync", f.durable, f.path);
    release(s, f.pending);
    f.pending = 0;
  }
  return rc;
}

void release(Shim& s, unsigned long long n) {
  s.undo.live -= std::min(s.undo.live, n);
  if (s.undo.live == 0 && s.undo.bytes > 0 && s.undo.fd >= 0 && s.undo.pid == getpid() &&
      ftruncate(s.undo.fd, 0) == 0) {
    s.undo.bytes = 0;
  }
}

void drop(Shim& s, File& f) {
  f.gone = true;
  release(s, f.pending);
  f.pending = 0;
}

}  // namespace leasehold::torture::disk_fault::detail
