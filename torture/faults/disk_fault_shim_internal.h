// torture/faults/disk_fault_shim_internal.h: the shim's bookkeeping, shared
// by disk_fault_shim.cc (the intercepted calls) and disk_fault_shim_core.cc
// (fd table, control file, journal). Internal to the shim. Every function is
// thread-safe (one mutex in the core).
#pragma once

#include <dlfcn.h>
#include <sys/types.h>

#include <cstring>

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

// The error a write on `fd` must fail with under the control file (0: none).
int write_fault(int fd);
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
