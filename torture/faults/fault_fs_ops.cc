// torture/faults/fault_fs_ops.cc: see fault_fs_ops.h.
#include "torture/faults/fault_fs_ops.h"

#include <dirent.h>
#include <linux/falloc.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace leasehold::torture::fault_fs {
namespace {

Context& ctx() { return *static_cast<Context*>(fuse_get_context()->private_data); }
int root() { return ctx().backing_fd; }
Modes modes() { return ctx().control->current(); }
Journal& journal() { return *ctx().journal; }

// "/a/b" -> "a/b" relative to the backing fd; "/" -> ".".
const char* rel(const char* path) { return path[1] == '\0' ? "." : path + 1; }

int result(int rc) { return rc < 0 ? -errno : 0; }

// A new file or directory belongs to the caller, not to the daemon (root).
void give_to_caller(const char* path) {
  if (::geteuid() != 0) return;
  const fuse_context* c = fuse_get_context();
  (void)::fchownat(root(), rel(path), c->uid, c->gid, AT_SYMLINK_NOFOLLOW);
}

int fd_of(const fuse_file_info* fi) { return static_cast<int>(fi->fh); }
DIR* dir_of(const fuse_file_info* fi) { return reinterpret_cast<DIR*>(static_cast<std::uintptr_t>(fi->fh)); }

void* fs_init(fuse_conn_info* conn, fuse_config* cfg) {
  cfg->use_ino = 1;       // the backing inode numbers
  cfg->nullpath_ok = 1;   // calls on open files use the fd, also after unlink
  cfg->hard_remove = 1;   // so unlink really unlinks (no .fuse_hidden files)
  cfg->kernel_cache = 0;
  cfg->direct_io = 0;     // page cache on: shared mmap (bbolt) needs it
  cfg->attr_timeout = 0;  // sizes from the backing file (a power cut shrinks files)
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_WRITEBACK_CACHE);  // writes go through at once
  return fuse_get_context()->private_data;
}

int fs_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (fi != nullptr) return result(::fstat(fd_of(fi), st));
  return result(::fstatat(root(), rel(path), st, AT_SYMLINK_NOFOLLOW));
}

int fs_readlink(const char* path, char* buf, size_t size) {
  const ssize_t n = ::readlinkat(root(), rel(path), buf, size - 1);
  if (n < 0) return -errno;
  buf[n] = '\0';
  return 0;
}

int fs_mknod(const char* path, mode_t mode, dev_t dev) {
  const int rc = ::mknodat(root(), rel(path), mode, dev);
  if (rc == 0) give_to_caller(path);
  return result(rc);
}

int fs_mkdir(const char* path, mode_t mode) {
  const int rc = ::mkdirat(root(), rel(path), mode);
  if (rc == 0) give_to_caller(path);
  return result(rc);
}

int fs_unlink(const char* path) { return result(::unlinkat(root(), rel(path), 0)); }
int fs_rmdir(const char* path) { return result(::unlinkat(root(), rel(path), AT_REMOVEDIR)); }

int fs_symlink(const char* target, const char* path) {
  const int rc = ::symlinkat(target, root(), rel(path));
  if (rc == 0) give_to_caller(path);
  return result(rc);
}

int fs_rename(const char* from, const char* to, unsigned int flags) {
  return result(::renameat2(root(), rel(from), root(), rel(to), flags));
}

int fs_link(const char* from, const char* to) { return result(::linkat(root(), rel(from), root(), rel(to), 0)); }

int fs_chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  if (fi != nullptr) return result(::fchmod(fd_of(fi), mode));
  return result(::fchmodat(root(), rel(path), mode, 0));
}

int fs_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  if (fi != nullptr) return result(::fchown(fd_of(fi), uid, gid));
  return result(::fchownat(root(), rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

int fs_truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (const int e = modes().truncate_error(); e != 0) return -e;
  const int fd = fi != nullptr ? fd_of(fi) : ::openat(root(), rel(path), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = journal().before_truncate(fd, size);
  if (rc == 0) rc = result(::ftruncate(fd, size));
  if (fi == nullptr) ::close(fd);
  return rc;
}

int fs_utimens(const char* path, const struct timespec tv[2], fuse_file_info* fi) {
  if (fi != nullptr) return result(::futimens(fd_of(fi), tv));
  return result(::utimensat(root(), rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

int open_file(const char* path, int flags, mode_t mode, fuse_file_info* fi) {
  if ((flags & O_TRUNC) != 0) {
    if (const int e = modes().truncate_error(); e != 0) return -e;
  }
  // O_TRUNC as a journaled truncate after the open.
  const int fd = ::openat(root(), rel(path), (flags & ~O_TRUNC) | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  if ((flags & O_TRUNC) != 0) {
    int rc = journal().before_truncate(fd, 0);
    if (rc == 0) rc = result(::ftruncate(fd, 0));
    if (rc != 0) {
      ::close(fd);
      return rc;
    }
  }
  fi->fh = static_cast<std::uint64_t>(fd);
  return 0;
}

int fs_open(const char* path, fuse_file_info* fi) { return open_file(path, fi->flags, 0, fi); }

int fs_create(const char* path, mode_t mode, fuse_file_info* fi) {
  const int rc = open_file(path, fi->flags | O_CREAT, mode, fi);
  if (rc == 0) give_to_caller(path);
  return rc;
}

int fs_read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  const ssize_t n = ::pread(fd_of(fi), buf, size, off);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  if (const int e = modes().write_error(); e != 0) return -e;
  if (const int rc = journal().before_write(fd_of(fi), off, size); rc != 0) return rc;
  const ssize_t n = ::pwrite(fd_of(fi), buf, size, off);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_statfs(const char*, struct statvfs* st) { return result(::fstatvfs(root(), st)); }

int fs_release(const char*, fuse_file_info* fi) {
  ::close(fd_of(fi));
  return 0;
}

int fs_fsync(const char*, int datasync, fuse_file_info* fi) {
  if (const int e = modes().fsync_error(); e != 0) return -e;
  const int rc = result(datasync != 0 ? ::fdatasync(fd_of(fi)) : ::fsync(fd_of(fi)));
  if (rc == 0) journal().synced(fd_of(fi));
  return rc;
}

int fs_opendir(const char* path, fuse_file_info* fi) {
  const int fd = ::openat(root(), rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int e = errno;
    ::close(fd);
    return -e;
  }
  fi->fh = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(d));
  return 0;
}

// Every entry at once (offset 0 for each: libfuse keeps the listing).
int fs_readdir(const char*, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info* fi, fuse_readdir_flags) {
  DIR* d = dir_of(fi);
  ::rewinddir(d);
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    struct stat st {};
    st.st_ino = e->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(e->d_type));
    if (fill(buf, e->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) break;
  }
  return -errno;
}

int fs_releasedir(const char*, fuse_file_info* fi) {
  ::closedir(dir_of(fi));
  return 0;
}

int fs_fsyncdir(const char*, int datasync, fuse_file_info* fi) {
  if (const int e = modes().fsync_error(); e != 0) return -e;
  const int fd = ::dirfd(dir_of(fi));
  return result(datasync != 0 ? ::fdatasync(fd) : ::fsync(fd));
}

int fs_access(const char* path, int mask) { return result(::faccessat(root(), rel(path), mask, AT_EACCESS)); }

int fs_fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
  if (const int e = modes().write_error(); e != 0) return -e;
  if ((mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) != 0) {
    if (const int rc = journal().before_punch(fd_of(fi), off, len); rc != 0) return rc;
  }
  return result(::fallocate(fd_of(fi), mode, off, len));
}

const fuse_operations kOperations = [] {
  fuse_operations ops{};
  ops.init = fs_init;
  ops.getattr = fs_getattr;
  ops.readlink = fs_readlink;
  ops.mknod = fs_mknod;
  ops.mkdir = fs_mkdir;
  ops.unlink = fs_unlink;
  ops.rmdir = fs_rmdir;
  ops.symlink = fs_symlink;
  ops.rename = fs_rename;
  ops.link = fs_link;
  ops.chmod = fs_chmod;
  ops.chown = fs_chown;
  ops.truncate = fs_truncate;
  ops.utimens = fs_utimens;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.statfs = fs_statfs;
  ops.release = fs_release;
  ops.fsync = fs_fsync;
  ops.opendir = fs_opendir;
  ops.readdir = fs_readdir;
  ops.releasedir = fs_releasedir;
  ops.fsyncdir = fs_fsyncdir;
  ops.access = fs_access;
  ops.fallocate = fs_fallocate;
  return ops;
}();

}  // namespace

const fuse_operations* operations() { return &kOperations; }

}  // namespace leasehold::torture::fault_fs
