// torture/cluster_disk_faults.h: the disk faults (disk-eio, disk-full) on the
// leasehold nodes of a cluster-mode torture run (docs/torture.md).
//
// A cluster node's own disk holds its --data-dir: the local snapshot files
// of the etcd log (log/etcd_log_snapshot.cc) and the audit history
// (history.log); the log itself is in etcd. With disk-eio or disk-full
// selected, every node runs under the disk-fault shim (disk_faults.h) with
// files of its own: the data dir, and a control file and journal beside it
// (<data dir>.disk-control, <data dir>.disk-journal, outside the data dir).
// node_setup() is part of the fixture's per-node hook, run at every
// (re)start AFTER ClusterLinks::node_setup (which resets the node's
// environment): it adds the shim to the environment and returns extra
// arguments: --snapshot-every-commands 200 (default 100 000), so that the
// local snapshot path is written during a short run.
//
// The faults, at each injection on one node (the primary three times in
// four, else a random node; a random node when there is no primary):
//   disk-eio   eio-fsync or eio-write (a coin) for TTL/4 to 1 x TTL
//   disk-full  enospc for TTL/4 to 1 x TTL
// Healed as in embedded mode: kill -9 of that node, the fault cleared, a
// power cut over its journal (every byte it had not fsynced dropped), and
// a restart on the same port and data dir. Both are crashes (history
// `crash` records), so the nemesis never combines them with another crash.
// Errors: inject fails (kIoError) when the control file cannot be written;
// heal fails when the power cut fails or the node does not restart.
// Thread-safety: node_setup() on the thread that starts nodes (the main
// thread, or the nemesis thread for restarts); the faults on the nemesis
// thread. Not safe for concurrent use; the nemesis serialises it.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "testkit/cluster_fixture.h"
#include "torture/disk_faults.h"
#include "torture/nemesis.h"
#include "torture/run.h"
#include "torture/target.h"

namespace leasehold::torture {

// True when the run selects a disk fault that cluster modes have.
bool wants_cluster_disk_faults(const RunConfig& config);

class ClusterDiskFaults {
 public:
  explicit ClusterDiskFaults(std::uint64_t seed) : rng_(seed ^ 0x27d4eb2fULL) {}
  std::vector<std::string> node_setup(testing::ClusterNodeProcess& node);
  // `primary`: the primary's node index, or -1 (it may wait a while).
  void add_faults(const RunConfig& config, Nemesis& nemesis, testing::LeaseholdCluster& cluster,
                  std::function<int()> primary);

 private:
  static DiskFaultFiles files(const testing::ClusterNodeProcess& node);
  Status inject(testing::LeaseholdCluster& cluster, const std::function<int()>& primary, const std::string& words);
  Status heal(testing::LeaseholdCluster& cluster);

  std::mt19937_64 rng_;
  int victim_ = -1;  // the node whose disk fails, -1 when none
};

}  // namespace leasehold::torture
