// torture/faults/fault_fs_ops.h: the filesystem operations of
// leasehold-fault-fs (fault_fs.h): libfuse 3's high-level callbacks, each a
// passthrough to the backing directory (openat & co. relative to its fd;
// open files and directories keep the backing fd, so an unlinked open file
// still works) unless the control file's faults make it fail.
//
// fuse_new() is given `operations()` and a Context as private data; the
// Context must outlive the fuse session. Every callback returns 0 or
// -errno, as libfuse wants.
// Thread-safety: the callbacks run on libfuse's worker threads at once;
// they share only the Context (the fd is read-only state, the ControlFile
// locks itself).
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse3/fuse.h>

#include "torture/faults/fault_fs.h"
#include "torture/faults/fault_fs_journal.h"

namespace leasehold::torture::fault_fs {

struct Context {
  int backing_fd = -1;       // O_DIRECTORY fd of BACKING, owned by main()
  ControlFile* control = nullptr;
  Journal* journal = nullptr;  // every change recorded before it is made (the power cut)
};

const fuse_operations* operations();

}  // namespace leasehold::torture::fault_fs
