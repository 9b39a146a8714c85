// server/data_dir_lock.h: one leasehold server per data dir.
//
// DataDirLock::acquire creates DIR if missing (each new directory's entry
// fsynced in its parent, so a power cut cannot drop a new data dir whole)
// and takes an exclusive,
// non-blocking flock(2) on DIR/leasehold.lock, held until the object is
// destroyed (or the process dies, even by kill -9: the kernel drops it).
// The file holds the owner's pid, for a person to read.
// Errors: kUnavailable "another leasehold server is using DIR (pid N holds
// DIR/leasehold.lock)" when it is taken; kIoError naming the path and the
// OS error when DIR or the file cannot be created.
// Thread-safety: one owner.
#pragma once

#include <memory>
#include <string>

#include "leasehold/status.h"

namespace leasehold::server {

class DataDirLock {
 public:
  static Result<std::unique_ptr<DataDirLock>> acquire(const std::string& dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace leasehold::server
