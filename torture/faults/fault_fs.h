// torture/faults/fault_fs.h: the contract of `leasehold-fault-fs`, a FUSE
// passthrough filesystem that breaks the disk of a process the disk-fault
// shim cannot reach (etcd: a Go program makes its system calls directly),
// and of its parts (docs/faults.md).
//
//   leasehold-fault-fs BACKING MOUNT CONTROL
//
// mirrors the directory BACKING at MOUNT (libfuse 3, high-level API, one
// thread per concurrent request) until SIGTERM, SIGINT or SIGHUP, then
// unmounts and exits 0. Exit 2: usage (BACKING is not a directory); exit 1:
// the mount failed. A stale mount at MOUNT (its daemon died) is lazily
// unmounted first. Mount options: allow_other (any user may use it),
// default_permissions (the kernel checks modes against the backing files'
// attributes), auto_unmount (fusermount3 unmounts it when the daemon dies,
// kill -9 included). The page cache stays on (shared read-only mmap, which
// etcd's bbolt uses, needs it) but writes go through to BACKING at once
// (no writeback cache), and fsync/fdatasync of a file or a directory are
// fsync/fdatasync of the backing one.
//
// CONTROL (outside MOUNT) selects the faults: words separated by white
// space, re-read whenever its identity, size or mtime changes (a stat at
// every call a fault can hit, so a change applies to the next call after
// it). Replace it atomically (write a temp file, rename). Missing, empty or
// `none`: no fault. Unknown words are ignored (reported once on stderr).
//   eio-write   write, fallocate and truncate (ftruncate, open with O_TRUNC
//               of a non-empty file) fail with EIO; nothing is written
//   eio-fsync   fsync and fdatasync of files and directories fail with EIO;
//               nothing is synced
//   enospc      write and fallocate fail with ENOSPC (a full disk)
// Reads, lookups, renames, unlinks, mkdir work in every mode.
//
// Power cut: SIGUSR1 drops every byte written since each file's last
// successful fsync/fdatasync (fault_fs_journal.h: the overwritten bytes
// are restored, the file cut to its synced size) and appends a line
// `cut files F bytes B errors E` to CONTROL.cut. Send it only while no
// process uses the mount (after kill -9 of the one under test): the cut
// changes the backing files under the kernel's page cache, which is
// dropped at the next open (attributes are never cached). Directory
// entries (create, rename, unlink) are not undone.
#pragma once

#include <sys/stat.h>

#include <mutex>
#include <string>
#include <string_view>

namespace leasehold::torture::fault_fs {

inline constexpr const char* kFsName = "leasehold-fault-fs";  // fsname in /proc/self/mountinfo

struct Modes {
  bool eio_write = false;
  bool eio_fsync = false;
  bool enospc = false;
  // The errno a write or fallocate fails with (0: none; EIO before ENOSPC).
  int write_error() const;
  int fsync_error() const;
  // The errno a truncate fails with (only eio-write breaks it).
  int truncate_error() const;
};

// Parses the control file's text. `unknown` (optional) gets the words it
// did not know, space-separated.
Modes parse_modes(std::string_view text, std::string* unknown = nullptr);

// The control file, re-read when it changes.
// Thread-safety: current() may be called from any thread.
class ControlFile {
 public:
  explicit ControlFile(std::string path) : path_(std::move(path)) {}
  // The faults in force now (a stat; a read when the file changed).
  Modes current();

 private:
  struct Key {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const Key&) const = default;
  };
  std::string path_;
  std::mutex mu_;
  bool loaded_ = false;
  Key key_;
  Modes modes_;
};

}  // namespace leasehold::torture::fault_fs
