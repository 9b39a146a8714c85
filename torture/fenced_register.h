// torture/fenced_register.h: the "storage" of the torture run, owned by the
// harness: one file per key in a directory, holding the highest token ever
// written. A write with a token lower than or equal to the stored one is
// refused; a higher one is stored. Each decision is appended, under the
// same lock, to <dir>/register.jsonl as a `reg` record (torture/history.h),
// so the records are in acceptance order.
//
// Shared by the worker processes through flock(2) on the key's file: a
// killed writer releases its lock with its file descriptors.
// Errors: kIoError when a file cannot be opened, locked, read or written.
// Thread-safety: write() is safe from any thread or process.
#pragma once

#include <cstdint>
#include <string>

#include "leasehold/status.h"
#include "torture/history.h"

namespace leasehold::torture {

class FencedRegister {
 public:
  explicit FencedRegister(std::string dir) : dir_(std::move(dir)) {}

  // Tries to write `token` under `key` (a name of [A-Za-z0-9_:-]). `record`
  // carries the writer's fields (process, inv, cmp2); the register fills
  // key, token, outcome and cmp, logs it and returns it.
  Result<Op> write(const std::string& key, std::uint64_t token, Op record);

  std::string log_path() const { return dir_ + "/register.jsonl"; }

 private:
  std::string dir_;
};

}  // namespace leasehold::torture
