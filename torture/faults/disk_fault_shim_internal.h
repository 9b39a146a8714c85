// torture/faults/disk_fault_shim_internal.h: the shim's bookkeeping, shared
// by disk_fault_shim.cc (the intercepted calls) and disk_fault_shim_core.cc
// (fd table, control file, journal, undo entries). Internal to the shim.
// Every function is thread-safe (one mutex in the core, plus one sync gate
// per file: see WriteHold).
#pragma once

#include <dlfcn.h>
#include <sys/types.h>

#include <cstring>
#include <memory>
#include <shared_mutex>

namespace leasehold::torture::disk_fault::detail {

// The next definition of a libc function (RTLD_NEXT): the real call.
template <typename F>
F real(const char* name) {
  static_assert(sizeof(F) == sizeof(void*));
  void* sym = dlsym(RTLD_NEXT, name);
  F f;
  std::memcpy(&f, &sym, sizeof f);
  return f;
}

// A regular file under the directory (disk_fault_shim_core.cc).
struct File;

// Held from before a write on a journaled file until the real write has
// returned: a shared hold of the file's sync gate, which a sync of that file
// holds exclusively, so every write lands wholly before or wholly after a
// sync (and its undo entry is voided by that sync only if it was before).
struct WriteHold {
  std::shared_ptr<File> file;
  std::shared_lock<std::shared_mutex> gate;  // of `file`; released first
};

// Where begin_write's write lands besides an explicit offset.
inline constexpr long long kAtPosition = -1;  // the fd's file position
inline constexpr long long kAtEnd = -2;       // the end of the file

// Before a write that may change `length` bytes at `offset` of fd's file
// (kAtPosition, kAtEnd; an O_APPEND fd writes at the end whatever the
// offset). Returns the errno the write must fail with: the control file's
// fault, or the error that kept the shim from saving the bytes the write
// would overwrite inside the file's durable range (it never lets such a
// write happen unjournaled). Returns 0 when the write may go ahead; `hold`
// must then live until the real call returns.
int begin_write(int fd, long long offset, unsigned long long length, WriteHold& hold);
// True when a sync of `fd` must fail with EIO.
bool sync_fault(int fd);
// Bookkeeping around the real calls.
void forget_fd(int fd);
void after_dup(int from, int to);
int do_openat(int dirfd, const char* path, int flags, mode_t mode, bool large);
int do_sync(int fd, int (*sync)(int));
int do_rename(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, unsigned flags);
int do_unlink(int dirfd, const char* path, int flags);

}  // namespace leasehold::torture::disk_fault::detail

#define REAL(name) \
  static const auto real_##name = ::leasehold::torture::disk_fault::detail::real<decltype(&::name)>(#name)
