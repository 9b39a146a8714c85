// torture/disk_faults.h: the disk-fault shim (torture/faults/, docs/faults.md)
// under a torture run's embedded server: its environment, its control file
// and the power cut over its journal.
//
// DiskFaultFiles names the per-run files: the data dir the shim covers, the
// control file and the journal (both outside the data dir, in the run's
// temp dir). shim_env() adds the shim to a server environment (LD_PRELOAD
// appended to one already there, e.g. libfaketime's). set_control()
// replaces the control file atomically (tmp + rename; "" = no fault).
// cut_power() drops every byte the server had not fsynced (run it only
// while the server is dead, after kill -9); no journal yet means nothing
// was written under the shim, so nothing to drop.
// Errors: kIoError when a file cannot be written or the cut fails.
// Thread-safety: free functions; the caller serialises them with the
// server's restarts (the nemesis thread).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

struct DiskFaultFiles {
  std::string data_dir;
  std::string control;
  std::string journal;
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// Sets `key` in `env` (replacing an earlier entry; for LD_PRELOAD, appending).
void put_env(EnvList& env, const std::string& key, const std::string& value);

EnvList shim_env(const DiskFaultFiles& files, EnvList env);
Status set_control(const DiskFaultFiles& files, const std::string& words);
Status cut_power(const DiskFaultFiles& files);

// True for the fault names that need the shim (power-cut, disk-eio, disk-full).
bool is_disk_fault(const std::string& name);

}  // namespace leasehold::torture
