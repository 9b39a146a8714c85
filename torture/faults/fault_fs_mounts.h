// torture/faults/fault_fs_mounts.h: the mount table as leasehold-fault-fs
// (fault_fs.h) and its users see it: is a path a mount point, lazy unmount,
// and the sweep of stale fault-fs mounts a killed harness may have left.
//
// is_mounted(path): `path` (absolute, normalised) is a mount point in
// /proc/self/mountinfo.
// unmount_lazily(path): detaches the mount at `path` (umount2 MNT_DETACH as
// root, else `fusermount3 -u -z`); open files keep working until closed.
// true if nothing is mounted there afterwards.
// sweep_stale(): lazily unmounts every leasehold-fault-fs mount whose
// daemon is gone (stat fails with ENOTCONN); live ones (another run's) are
// left alone. Returns how many it unmounted.
// Errors: none reported beyond the return values.
// Thread-safety: free functions, safe from any thread (they run no
// callbacks; fusermount3 is a child process waited for).
#pragma once

#include <string>

namespace leasehold::torture::fault_fs {

bool is_mounted(const std::string& path);
bool unmount_lazily(const std::string& path);
int sweep_stale();

}  // namespace leasehold::torture::fault_fs
