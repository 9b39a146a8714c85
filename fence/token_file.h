// fence/token_file.h (internal): a small crash-safe file that records the
// highest admitted token of one fence key, and doubles as that key's lock.
//
// Format (little-endian), two 32-byte slots at offsets 0 and 4096 so that a
// torn write can only damage the slot being written:
//   magic "LHFT" | u32 version=1 | u64 seq | u64 token | u32 crc32(bytes 0..23) | u32 0
// The valid slot with the highest seq is current. A write goes to the other
// slot with seq+1 and is fdatasync'ed, so after a crash the file holds either
// the new record or the previous one (which is correct: the new one was not
// acknowledged). A file with bytes but no valid slot is kCorruption; the key
// then refuses every token until an operator repairs it (never guess low).
//
// The file is never replaced, so flock() on it serialises every writer of the
// key: threads (each opens its own descriptor) and processes alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence::detail {

enum class LockMode { kShared, kExclusive };

// An open token file holding a flock for its whole lifetime. Move-only; the
// destructor closes the descriptor, which releases the lock.
// Thread-safety: one object per thread (each call opens its own).
class LockedTokenFile {
 public:
  // Opens `path` (creating it with mode 0644 if `create`) and takes the lock,
  // waiting at most `lock_timeout` on the monotonic clock.
  // Errors: kNotFound (absent and !create), kTimedOut (lock busy), kIoError.
  static Result<LockedTokenFile> open(const std::string& path, LockMode mode, bool create,
                                      std::chrono::milliseconds lock_timeout);

  LockedTokenFile(LockedTokenFile&& other) noexcept;
  LockedTokenFile& operator=(LockedTokenFile&& other) noexcept;
  LockedTokenFile(const LockedTokenFile&) = delete;
  LockedTokenFile& operator=(const LockedTokenFile&) = delete;
  ~LockedTokenFile();

  // The recorded token, or nullopt for a new (empty) file.
  // Errors: kCorruption (bytes but no valid record), kIoError.
  Result<std::optional<Token>> read();

  // Records `token` as the newest record and fdatasync()s the file. Needs an
  // exclusive lock and a prior read(). The caller must fsync the directory
  // before acknowledging (the file may be new). Errors: kIoError.
  Status write(Token token);

 private:
  LockedTokenFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_ = -1;
  std::string path_;
  std::uint64_t seq_ = 0;  // seq of the current record (0: none), set by read()
  bool read_ok_ = false;   // read() succeeded since open; write() requires it
};

// fsync()s the directory `dir`. Errors: kIoError.
Status fsync_directory(const std::string& dir);

// "<what> <path>: <strerror(err)>" as kIoError.
Status io_error(const std::string& what, const std::string& path, int err);

}  // namespace leasehold::fence::detail
