// torture/etcd_disk_faults.h: disk faults on etcd's disk in the cluster
// modes (docs/torture.md): every etcd member's data dir on a fault
// filesystem of its own (leasehold-fault-fs, torture/faults/fault_fs.h).
//
//   disk-eio-etcd   one member's disk fails: eio-fsync or eio-write (even
//                   odds) in its control file; etcd exits at its next WAL
//                   write or fsync (fatal to it)
//   disk-full-etcd  the same with enospc
//   power-cut-etcd  kill -9 of one member, then a power cut of its disk
//                   (every byte it had not fsynced dropped: fault_fs.h),
//                   restarted after the hold
// With 3 members the victim is a minority; with 1 it is all of etcd, so
// the leasehold nodes must stop acknowledging. Heal clears the fault; if
// the member died, or is not healthy within 5 s (it may be dying), it is
// killed (-9) and restarted on the same data dir. All three are crashes in
// the history (like kill-etcd); the first two are never combined with
// another crash (nemesis.h: a restart would meet the failed disk), nor
// power-cut-etcd with another etcd kill.
//
// EtcdDisks owns the fault filesystems (a private temp dir with one
// backing dir, mount and control file per member). route() is the
// EtcdClusterOptions::data_dir_route: it starts member i's filesystem and
// returns its mount ("" when it did not mount: etcd's start then fails).
// Its constructor first sweeps stale fault-fs mounts a killed harness left
// (fault_fs_mounts.h). Destroy it after etcd has died (it unmounts).
// Errors: route() reports a failed mount on stderr; the faults' inject and
// heal return kIoError (control file) or etcd's restart error.
// Thread-safety: one owner thread, the main thread (the filesystems die
// with the thread that started them, like etcd members).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "testkit/temp_dir.h"
#include "torture/faults/fault_fs_process.h"
#include "torture/nemesis.h"
#include "torture/run.h"

namespace leasehold::testing {
class EtcdCluster;
}

namespace leasehold::torture {

bool is_etcd_disk_fault(const std::string& name);

class EtcdDisks {
 public:
  EtcdDisks();
  std::string route(int member);
  Status set_faults(int member, const std::string& words);
  // Only while member i is dead: its report ("cut files F bytes B errors 0").
  Result<std::string> cut_power(int member);

 private:
  FaultFsProcess* disk(int member);  // null if none
  testing::TempDir dir_;  // first: removed after the mounts are gone
  std::vector<std::unique_ptr<FaultFsProcess>> disks_;
};

// Adds the faults of `config` among disk-eio-etcd, disk-full-etcd,
// power-cut-etcd.
// `pick(n)` draws in [0, n) from the target's seeded generator.
void add_etcd_disk_faults(const RunConfig& config, Nemesis& nemesis, EtcdDisks& disks, testing::EtcdCluster& etcd,
                          std::function<int(int)> pick);

}  // namespace leasehold::torture
