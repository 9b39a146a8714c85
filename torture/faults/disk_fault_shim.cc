// torture/faults/disk_fault_shim.cc: an LD_PRELOAD library that injects
// disk faults (EIO, ENOSPC) into the file calls of the process under test
// and journals what was made durable, for `leasehold-power-cut`. Contract:
// torture/faults/disk_fault_shim.h. This file holds the intercepted libc
// calls; the bookkeeping is in disk_fault_shim_core.cc. Thread-safe.
#include <fcntl.h>
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

}  // namespace

#define FAIL_WRITE_IF_FAULT(fd)       \
  if (const int e = write_fault(fd)) { \
    errno = e;                         \
    return -1;                         \
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
  FAIL_WRITE_IF_FAULT(fd);
  return real_write(fd, buf, n);
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  REAL(pwrite);
  FAIL_WRITE_IF_FAULT(fd);
  return real_pwrite(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  REAL(pwrite64);
  FAIL_WRITE_IF_FAULT(fd);
  return real_pwrite64(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec* iov, int count) {
  REAL(writev);
  FAIL_WRITE_IF_FAULT(fd);
  return real_writev(fd, iov, count);
}
ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t off) {
  REAL(pwritev);
  FAIL_WRITE_IF_FAULT(fd);
  return real_pwritev(fd, iov, count, off);
}
ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t off) {
  REAL(pwritev64);
  FAIL_WRITE_IF_FAULT(fd);
  return real_pwritev64(fd, iov, count, off);
}
int fallocate(int fd, int mode, off_t off, off_t len) {
  REAL(fallocate);
  FAIL_WRITE_IF_FAULT(fd);
  return real_fallocate(fd, mode, off, len);
}
int fallocate64(int fd, int mode, off64_t off, off64_t len) {
  REAL(fallocate64);
  FAIL_WRITE_IF_FAULT(fd);
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
