// torture/faults/power_cut.h: a simulated power cut over the files the
// disk-fault shim journaled (torture/faults/disk_fault_shim.h): after the
// process under test was killed (kill -9), everything it had not made
// durable is dropped, as a power loss would:
//   - a file whose creation (or rename into place) was not followed by an
//     fsync of its directory is deleted (a rename is undone instead, and
//     the file it replaced is restored from the shim's backup copy, then
//     cut back as below);
//   - every other journaled file gets back every byte an overwrite changed
//     since its last successful fsync/fdatasync (the `undo` entries after
//     its last `sync` line, restored newest first so the oldest pre-image,
//     the synced one, stays; only bytes below the synced size), then is
//     truncated to its size at that sync (or at its first open, if never
//     synced). So every byte reads as it did at that sync, for in-place
//     writes (preallocated files) as for appends.
// A last journal line without its newline (torn by the kill) is ignored.
// Limits (docs/faults.md): an unlink, an O_TRUNC of an existing file, an
// ftruncate/truncate below the synced size, and writes the shim does not
// see (mmap, stdio, copy_file_range/sendfile/splice) are not undone.
//
// Errors: kIoError when the journal or an undo data file cannot be read
// (or is shorter than a line says) or a file cannot be changed;
// kInvalidArgument on a malformed journal line, or an `undo` line for a
// file no earlier line opened or created. On an error the files may be
// partly cut and the journal is not renamed.
// Thread-safety: free function; run it only while the process is dead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

struct PowerCutReport {
  std::vector<std::string> deleted;
  std::vector<std::string> renames_undone;     // "<from> <- <to>"
  std::vector<std::string> overwrites_undone;  // "<path> [<begin>, <end>)", per undo entry restored
  std::vector<std::string> truncated;          // "<path> <old size> -> <new size>"
  std::uint64_t bytes_dropped = 0;   // bytes of deleted files, plus bytes cut off by truncation
  std::uint64_t bytes_restored = 0;  // bytes written back by the undone overwrites
};

// Applies the cut, then renames the journal to "<journal>.cut" (so a later
// run starts a fresh journal and the same cut is never applied twice).
Result<PowerCutReport> power_cut(const std::string& journal_path);

}  // namespace leasehold::torture
