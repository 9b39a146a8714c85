// leasehold/fence_file.h: whole-file writes guarded by a fencing token, for
// jobs whose output is files.
//
// write(path, token, bytes) replaces the file at `path` with `bytes` only if
// `token` is >= the highest token that ever wrote `path`. The token state
// lives beside the data in "<path>.fence" (a checksummed two-slot record, see
// fence/token_file.h), and that file is also the lock: write() holds an
// exclusive flock() on it from the token check until the new file is in
// place, so racing writers (threads or processes) are serialised and the
// check-and-rename is atomic with respect to every other writer.
//
// Steps under the lock: read the token record; if stale, return kStaleToken
// without writing anything. Otherwise write the bytes to the temp file
// "<dir>/.<name>.fence-tmp" (truncating any leftover from a crashed writer),
// fsync it, record the token (fdatasync), fsync the directory, rename the
// temp file onto `path`, fsync the directory again.
//
// Crash safety: after a crash at any point the file holds either the old or
// the new bytes, never a mix; the token record is written before the rename,
// so a stale writer can never replace bytes written under a newer token. A
// crashed writer leaves at most the one temp file, which the next write
// reuses. Readers need no lock: they see old or new bytes.
//
// Requirements: `path`'s directory exists and is on a local file system where
// flock() works between processes (not NFS). Every writer of a path must go
// through this class (a plain write bypasses the fence).
//
// Thread-safety: a FencedFileWriter is immutable; call it from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence {

struct FencedFileWriterOptions {
  // How long write() waits for another writer of the same path.
  std::chrono::milliseconds lock_timeout{10000};
  // Largest accepted content.
  std::size_t max_bytes = std::size_t{1} << 30;
};

class FencedFileWriter {
 public:
  explicit FencedFileWriter(FencedFileWriterOptions options = {}) : options_(options) {}

  // Replaces `path` with `bytes` if `token` is not stale.
  // Errors: kStaleToken (nothing written; message names the highest token),
  // kInvalidArgument (empty path or a path ending in '/'), kLimitExceeded
  // (bytes > max_bytes), kTimedOut (lock busy), kCorruption (token record
  // unreadable: every token is refused), kIoError.
  Status write(const std::string& path, Token token, std::string_view bytes) const;

  // The highest token that wrote `path`, or nullopt if none.
  // Errors: as write() except kStaleToken/kLimitExceeded.
  Result<std::optional<Token>> highest(const std::string& path) const;

  // "<path>.fence": the token record and lock file beside the data.
  static std::string fence_path(const std::string& path);
  // "<dir>/.<name>.fence-tmp": the temp file a writer fills before renaming.
  static std::string temp_path(const std::string& path);

 private:
  const FencedFileWriterOptions options_;
};

}  // namespace leasehold::fence
