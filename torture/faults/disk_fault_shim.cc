// torture/faults/disk_fault_shim.cc: an LD_PRELOAD library that injects
// disk faults (EIO, ENOSPC) into the file calls of the process under test
// and journals what was made durable, for `leasehold-power-cut`. Contract:
// torture/faults/disk_fault_shim.h. This file holds the intercepted libc
// calls; the bookkeeping is in disk_fault_shim_core.cc, and the undo
// entries a write of durable bytes journals first, with the syncs that void
// them, in disk_fault_shim_undo.cc. Thread-safe.
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "torture/faults/disk_fault_shim_internal.h"

namespace {

using namespace leasehold::torture::disk_fault::detail;

mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(ap, unsigned)) : 0;
}

// The bytes a vector write covers (saturating; a bad count covers none).
unsigned long long iov_bytes(const struct iovec* iov, int count) {
  unsigned long long total = 0;
  for (int i = 0; i < count; ++i) {
    total += iov[i].iov_len;
    if (total < iov[i].iov_len) return ~0ULL;
  }
  return total;
}

// Where pwritev2 writes: RWF_APPEND at the end, offset -1 at the position.
long long v2_offset(off64_t off, int flags) {
  if ((flags & RWF_APPEND) != 0) return kAtEnd;
  return off == -1 ? kAtPosition : off;
}

// The bytes at `off` a fallocate may change: a zeroed or punched range, or
// everything from `off` on when the mode shifts the rest of the file; none
// for an allocation (existing bytes stay).
unsigned long long fallocate_bytes(int mode, off64_t off, off64_t len) {
  if (off < 0 || len <= 0) return 0;
  if ((mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) != 0) return static_cast<unsigned long long>(len);
  if ((mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE)) != 0) return ~0ULL;
  return 0;
}

}  // namespace

// Fails the write with the errno begin_write() returns; else `hold` keeps
// the file's sync gate until the write returns.
#define BEGIN_WRITE(fd, offset, length)                      \
  WriteHold hold;                                            \
  if (const int e = begin_write(fd, offset, length, hold)) { \
    errno = e;                                               \
    return -1;                                               \
  }

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(AT_FDCWD, path, flags, mode, false);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(AT_FDCWD, path, flags, mode, true);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags, mode, false);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return do_openat(dirfd, path, flags, mode, true);
}
int creat(const char* path, mode_t mode) { return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, false); }
int creat64(const char* path, mode_t mode) { return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, true); }

int close(int fd) {
  REAL(close);
  forget_fd(fd);
  return real_close(fd);
}

int dup(int fd) {
  REAL(dup);
  const int to = real_dup(fd);
  after_dup(fd, to);
  return to;
}
int dup2(int fd, int to) {
  REAL(dup2);
  const int rc = real_dup2(fd, to);
  if (rc >= 0 && fd != to) after_dup(fd, rc);
  return rc;
}
int dup3(int fd, int to, int flags) {
  REAL(dup3);
  const int rc = real_dup3(fd, to, flags);
  after_dup(fd, rc);
  return rc;
}
int fcntl(int fd, int cmd, ...) {
  REAL(fcntl);
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);  // as glibc does: an int or a pointer, or unused
  va_end(ap);
  const int rc = real_fcntl(fd, cmd, arg);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) after_dup(fd, rc);
  return rc;
}

ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  BEGIN_WRITE(fd, kAtPosition, n);
  return real_write(fd, buf, n);
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  REAL(pwrite);
  BEGIN_WRITE(fd, off, off < 0 ? 0 : n);
  return real_pwrite(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  REAL(pwrite64);
  BEGIN_WRITE(fd, off, off < 0 ? 0 : n);
  return real_pwrite64(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec* iov, int count) {
  REAL(writev);
  BEGIN_WRITE(fd, kAtPosition, iov_bytes(iov, count));
  return real_writev(fd, iov, count);
}
ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t off) {
  REAL(pwritev);
  BEGIN_WRITE(fd, off, off < 0 ? 0 : iov_bytes(iov, count));
  return real_pwritev(fd, iov, count, off);
}
ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t off) {
  REAL(pwritev64);
  BEGIN_WRITE(fd, off, off < 0 ? 0 : iov_bytes(iov, count));
  return real_pwritev64(fd, iov, count, off);
}
ssize_t pwritev2(int fd, const struct iovec* iov, int count, off_t off, int flags) {
  REAL(pwritev2);
  BEGIN_WRITE(fd, v2_offset(off, flags), off < -1 ? 0 : iov_bytes(iov, count));
  return real_pwritev2(fd, iov, count, off, flags);
}
ssize_t pwritev64v2(int fd, const struct iovec* iov, int count, off64_t off, int flags) {
  REAL(pwritev64v2);
  BEGIN_WRITE(fd, v2_offset(off, flags), off < -1 ? 0 : iov_bytes(iov, count));
  return real_pwritev64v2(fd, iov, count, off, flags);
}
int fallocate(int fd, int mode, off_t off, off_t len) {
  REAL(fallocate);
  BEGIN_WRITE(fd, off, fallocate_bytes(mode, off, len));
  return real_fallocate(fd, mode, off, len);
}
int fallocate64(int fd, int mode, off64_t off, off64_t len) {
  REAL(fallocate64);
  BEGIN_WRITE(fd, off, fallocate_bytes(mode, off, len));
  return real_fallocate64(fd, mode, off, len);
}

int fsync(int fd) {
  REAL(fsync);
  return do_sync(fd, real_fsync);
}
int fdatasync(int fd) {
  REAL(fdatasync);
  return do_sync(fd, real_fdatasync);
}
int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
  REAL(sync_file_range);
  // flags 0 is a no-op (RocksDB probes support with it): never failed.
  if (flags != 0 && sync_fault(fd)) {
    errno = EIO;
    return -1;
  }
  return real_sync_file_range(fd, off, n, flags);  // not durable: never journaled
}

int rename(const char* from, const char* to) { return do_rename(AT_FDCWD, from, AT_FDCWD, to, 0); }
int renameat(int fromfd, const char* from, int tofd, const char* to) { return do_rename(fromfd, from, tofd, to, 0); }
int renameat2(int fromfd, const char* from, int tofd, const char* to, unsigned int flags) {
  return do_rename(fromfd, from, tofd, to, flags);
}
int unlink(const char* path) { return do_unlink(AT_FDCWD, path, 0); }
int unlinkat(int dirfd, const char* path, int flags) { return do_unlink(dirfd, path, flags); }

}  // extern "C"
