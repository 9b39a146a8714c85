// torture/faults/fault_fs_process.h: one running `leasehold-fault-fs`
// (fault_fs.h) as a test or the torture harness uses it: start it over a
// backing directory, set its faults, stop it.
//
// start() creates `backing` and `mount` (mode 0700) if missing, clears the
// control file, spawns the daemon (killed with SIGKILL if the spawning
// thread dies: its auto_unmount helper then unmounts) and waits until
// `mount` is a mount point. set_faults() replaces the control file
// atomically ("" or "none": no fault; e.g. "eio-fsync"); it applies to the
// next call on the mount. stop() sends SIGTERM, waits for a clean exit and
// for the mount to go; if the daemon hangs it is killed and the mount
// lazily detached. The destructor stops it. cut_power() makes the daemon
// drop everything not fsynced (SIGUSR1, fault_fs.h) and waits for its
// report line ("cut files F bytes B errors E"); call it only while nothing
// uses the mount.
// Errors: start(): kIoError (cannot create a directory, spawn, or write
// the control file), kUnavailable (not mounted within `timeout`: the
// daemon's stderr is in the message). set_faults(): kIoError.
// cut_power(): kUnavailable (no report within 10 s, or errors in it). stop():
// kUnavailable when the mount could not be removed.
// Ownership: owns the daemon process; the directories are the caller's.
// Thread-safety: one owner thread (the one that lives as long as the mount:
// the main thread).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "leasehold/status.h"
#include "testkit/subprocess.h"

namespace leasehold::torture {

class FaultFsProcess {
 public:
  static Result<std::unique_ptr<FaultFsProcess>> start(const std::string& binary, const std::string& backing,
                                                       const std::string& mount, const std::string& control,
                                                       std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~FaultFsProcess();
  FaultFsProcess(const FaultFsProcess&) = delete;
  FaultFsProcess& operator=(const FaultFsProcess&) = delete;

  Status set_faults(const std::string& words);
  Result<std::string> cut_power();
  Status stop();
  const std::string& mount() const { return mount_; }
  const std::string& backing() const { return backing_; }
  testing::Subprocess& process() { return process_; }

 private:
  FaultFsProcess(std::string backing, std::string mount, std::string control, std::string log)
      : backing_(std::move(backing)), mount_(std::move(mount)), control_(std::move(control)), log_(std::move(log)) {}
  std::string backing_, mount_, control_, log_;
  testing::Subprocess process_;
};

}  // namespace leasehold::torture
