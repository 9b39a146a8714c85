// torture/faults/power_cut.h: a simulated power cut over the files the
// disk-fault shim journaled (torture/faults/disk_fault_shim.h): after the
// process under test was killed (kill -9), everything it had not made
// durable is dropped, as a power loss would:
//   - a file whose creation (or rename into place) was not followed by an
//     fsync of its directory is deleted (a rename is undone instead, and
//     the file it replaced is restored from the shim's backup copy);
//   - every other journaled file is truncated to its size at its last
//     successful fsync/fdatasync (or at its first open, if never synced).
// Limits (docs/faults.md): the model is append-only files (RocksDB's WAL,
// MANIFEST and SSTs; write-tmp-fsync-rename files): an overwrite of bytes
// already fsynced is not undone, an unlink is never undone, and O_TRUNC of
// an existing file is not undone.
//
// Errors: kIoError when the journal cannot be read or a file cannot be
// changed; kInvalidArgument on a malformed journal line.
// Thread-safety: free function; run it only while the process is dead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

struct PowerCutReport {
  std::vector<std::string> deleted;
  std::vector<std::string> renames_undone;
  std::vector<std::string> truncated;  // "<path> <old size> -> <new size>"
  std::uint64_t bytes_dropped = 0;
};

// Applies the cut, then renames the journal to "<journal>.cut" (so a later
// run starts a fresh journal and the same cut is never applied twice).
Result<PowerCutReport> power_cut(const std::string& journal_path);

}  // namespace leasehold::torture
