// leasehold/fence_durable.h: a fence gate whose state survives restarts and
// crashes, for resources on one machine (files, a local database, a device)
// that outlive the process guarding them.
//
// Layout: one file per key in a directory, named after the key
// ("<encoded key>.fence"; letters, digits, '-' and '_' are kept, every other
// byte becomes %XX). Each file is a two-slot checksummed record (see
// fence/token_file.h) updated in place with fdatasync, then the directory is
// fsynced, before admit() returns. Raising a key's token costs one
// fdatasync (plus one directory fsync the first time this gate object
// touches the key); re-admitting the current token costs no write.
//
// Atomicity: admit() holds an exclusive flock() on the key's file while it
// reads, compares and records, so concurrent admissions of one key, from
// threads of this process or from other processes, are serialised. Keys do
// not block each other. The directory must be on a local file system where
// flock() works between processes (not NFS).
//
// Corruption: a key file that has bytes but no valid record makes admit()
// and highest() return kCorruption for that key: the gate never guesses a
// lower token. Delete the file only if you know no older holder can write.
//
// Thread-safety: all methods may be called from many threads at once.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "leasehold/fence.h"
#include "leasehold/status.h"

namespace leasehold::fence {

struct DurableFenceGateOptions {
  // How long admit()/highest() wait for another writer of the same key.
  std::chrono::milliseconds lock_timeout{10000};
};

class DurableFenceGate final : public FenceGate {
 public:
  // A key's encoded file name may be at most this many characters.
  static constexpr std::size_t kMaxEncodedKeyChars = 200;

  // Opens the gate stored in `dir`, creating the directory (one level) if it
  // does not exist. Errors: kInvalidArgument (empty path), kIoError.
  static Result<std::unique_ptr<DurableFenceGate>> open(std::string dir,
                                                        DurableFenceGateOptions options = {});

  // As FenceGate::admit. Errors: kInvalidArgument (empty or too-long key),
  // kTimedOut (key locked longer than lock_timeout), kCorruption, kIoError.
  Result<Admission> admit(std::string_view key, Token token) override;
  Result<std::optional<Token>> highest(std::string_view key) override;

  const std::string& dir() const { return dir_; }

  // The file name used for `key` inside dir(). Errors: kInvalidArgument.
  static Result<std::string> file_name_for(std::string_view key);

 private:
  DurableFenceGate(std::string dir, DurableFenceGateOptions options)
      : dir_(std::move(dir)), options_(options) {}

  // Makes `name`'s directory entry durable (fsync of the directory) unless
  // this gate already did so since it was opened.
  Status ensure_entry_durable(const std::string& name);

  const std::string dir_;
  const DurableFenceGateOptions options_;
  std::mutex durable_mu_;
  std::unordered_set<std::string> durable_names_;  // guarded by durable_mu_; bounded
};

}  // namespace leasehold::fence
