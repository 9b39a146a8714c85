// torture/faults/disk_fault_shim.h: the contract of the disk-fault shim
// (libleasehold_disk_fault_shim.so, loaded with LD_PRELOAD into a server)
// and of the `leasehold-power-cut` tool, shared by both and by the tests
// (docs/faults.md).
//
// Environment of the process under test:
//   LEASEHOLD_FAULT_DIR      required: only files and directories at or under
//                            this directory are affected and journaled (it
//                            may be created after the process starts)
//   LEASEHOLD_FAULT_CONTROL  optional: the control file (below)
//   LEASEHOLD_FAULT_JOURNAL  optional: the journal the shim appends to (must
//                            be outside LEASEHOLD_FAULT_DIR); `leasehold-power-cut
//                            JOURNAL` later drops everything not fsynced
//
// Control file: whitespace-separated words, re-read whenever its size or
// mtime changes (checked at every intercepted call on a file under the
// directory, so a change applies to the next call). A missing or empty file
// means no fault.
//   eio-write    write/pwrite/writev/pwritev/fallocate fail with EIO
//   eio-fsync    fsync/fdatasync/sync_file_range fail with EIO (nothing is
//                synced, and nothing is journaled as durable)
//   enospc       write/pwrite/writev/pwritev/fallocate fail with ENOSPC
// Unknown words are ignored (so a harness can comment: "# ...").
//
// Journal lines (tab-separated, appended with one write() each, always
// before the intercepted call returns, so anything the process acted on
// after a successful fsync is in the journal):
//   open    <size> <path>            a regular file existed when opened
//   create  0      <path>            open(O_CREAT) made a new file
//   sync    <size> <path>            fsync/fdatasync succeeded at this size
//   dirsync 0      <dir>             fsync of a directory succeeded
//   rename  0      <old> <new> <backup or ->   rename (backup: a copy of
//                                    the file <new> replaced)
//   unlink  0      <path>
#pragma once

namespace leasehold::torture::disk_fault {

inline constexpr const char* kDirEnv = "LEASEHOLD_FAULT_DIR";
inline constexpr const char* kControlEnv = "LEASEHOLD_FAULT_CONTROL";
inline constexpr const char* kJournalEnv = "LEASEHOLD_FAULT_JOURNAL";

}  // namespace leasehold::torture::disk_fault
