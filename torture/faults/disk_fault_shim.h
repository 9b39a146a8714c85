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
//                            and undoes overwrites of fsynced bytes
//
// Control file: whitespace-separated words, re-read whenever its size or
// mtime changes (checked at every intercepted call on a file under the
// directory, so a change applies to the next call). A missing or empty file
// means no fault.
//   eio-write    write/pwrite/writev/pwritev/pwritev2/fallocate fail with EIO
//   eio-fsync    fsync/fdatasync/sync_file_range fail with EIO (nothing is
//                synced, and nothing is journaled as durable)
//   enospc       write/pwrite/writev/pwritev/pwritev2/fallocate fail with ENOSPC
//   only:PREFIX  the faults above hit only files whose path below
//                LEASEHOLD_FAULT_DIR starts with PREFIX (e.g. only:rocksdb/
//                fails RocksDB's writes but not the entry journal's)
// Unknown words are ignored (so a harness can comment: "# ...").
//
// Journal lines (tab-separated, appended with one write() each, always
// before the intercepted call returns, so anything the process acted on
// after a successful fsync is in the journal):
//   open    <size> <path>            a regular file existed when opened
//   create  0      <path>            open(O_CREAT) made a new file
//   sync    <size> <path>            fsync/fdatasync succeeded at this size
//                                    (voids the file's earlier undo lines)
//   dirsync 0      <dir>             fsync of a directory succeeded
//   rename  0      <old> <new> <backup or ->   rename (backup: a copy of
//                                    the file <new> replaced)
//   unlink  0      <path>
//   undo    <offset> <length> <path> <data file> <data offset>
//                                    written BEFORE a write that changes
//                                    bytes [offset, offset + length) of the
//                                    file's durable range (below its size at
//                                    its last sync, or at its first open or
//                                    creation in this process): those bytes
//                                    as they were are at <data offset> of
//                                    <data file>
// Undo entries: every write path intercepted (write and writev at the
// file position or at the end with O_APPEND, pwrite, pwritev, pwritev2,
// fallocate that punches, zeroes, collapses or inserts) first reads the
// bytes it will overwrite (through the same fd, or a new read-only fd of
// the file when the fd is write-only or O_DIRECT) and appends them to this
// process's undo data file "<journal>.undo.<pid>.<n>" (created with
// O_EXCL); only then is the line journaled, and only then the write done.
// A write whose bytes cannot be saved or journaled fails with that errno
// (EIO when the journal write failed) instead of going ahead unjournaled.
// The data file is emptied whenever no entry in it is live any more (each
// voided by its file's sync, or its file unlinked, or replaced by a rename
// a directory fsync made durable), so it holds only the bytes overwritten
// since the last syncs. A sync of a file holds off writes to it
// (WriteHold in disk_fault_shim_internal.h), so each write is wholly before
// or after it. sync_file_range is never durable: it voids nothing.
// Not seen: ftruncate/truncate, writes through mmap, stdio, sendfile,
// splice, copy_file_range; and a second process writing the same file
// judges "durable" by its own opens and syncs only.
#pragma once

namespace leasehold::torture::disk_fault {

inline constexpr const char* kDirEnv = "LEASEHOLD_FAULT_DIR";
inline constexpr const char* kControlEnv = "LEASEHOLD_FAULT_CONTROL";
inline constexpr const char* kJournalEnv = "LEASEHOLD_FAULT_JOURNAL";

}  // namespace leasehold::torture::disk_fault
