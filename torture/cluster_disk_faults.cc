// torture/cluster_disk_faults.cc: see cluster_disk_faults.h.
#include "torture/cluster_disk_faults.h"

#include <filesystem>
#include <utility>

namespace leasehold::torture {

bool wants_cluster_disk_faults(const RunConfig& c) { return wants_fault(c, "disk-eio") || wants_fault(c, "disk-full"); }

DiskFaultFiles ClusterDiskFaults::files(const testing::ClusterNodeProcess& node) {
  return {node.data_dir, node.data_dir + ".disk-control", node.data_dir + ".disk-journal"};
}

std::vector<std::string> ClusterDiskFaults::node_setup(testing::ClusterNodeProcess& node) {
  const DiskFaultFiles f = files(node);
  std::error_code ec;
  std::filesystem::create_directories(node.data_dir, ec);
  // Made empty once; only the faults change it afterwards (a node that
  // another fault restarts while its disk fails meets the failed disk).
  if (!std::filesystem::exists(f.control)) (void)set_control(f, "");
  node.env = shim_env(f, std::move(node.env));
  return {"--snapshot-every-commands", "200"};
}

Status ClusterDiskFaults::inject(testing::LeaseholdCluster& cluster, const std::function<int()>& primary,
                                 const std::string& words) {
  const int p = primary();
  const int n = cluster.size();
  victim_ = p >= 0 && std::uniform_int_distribution<int>(0, 3)(rng_) != 0
                ? p
                : std::uniform_int_distribution<int>(0, n - 1)(rng_);
  return set_control(files(cluster.node(victim_)), words);
}

Status ClusterDiskFaults::heal(testing::LeaseholdCluster& cluster) {
  if (victim_ < 0) return {};
  const int i = std::exchange(victim_, -1);
  testing::ClusterNodeProcess& node = cluster.node(i);
  node.process.kill9();
  const DiskFaultFiles f = files(node);
  if (Status st = set_control(f, ""); !st) return st;
  if (Status st = cut_power(f); !st) return st;
  return cluster.spawn(i) ? Status() : Status(ErrorCode::kUnavailable, "node did not restart after its disk fault");
}

void ClusterDiskFaults::add_faults(const RunConfig& c, Nemesis& nemesis, testing::LeaseholdCluster& cluster,
                                   std::function<int()> primary) {
  using std::chrono::milliseconds;
  const milliseconds ttl(c.ttl_ms);
  auto heal = [this, &cluster] { return this->heal(cluster); };
  if (wants_fault(c, "disk-eio")) {
    nemesis.add({"disk-eio",
                 [this, &cluster, primary] {
                   const bool fsync = std::uniform_int_distribution<int>(0, 1)(rng_) == 1;
                   return inject(cluster, primary, fsync ? "eio-fsync" : "eio-write");
                 },
                 heal, ttl / 4, ttl, true});
  }
  if (wants_fault(c, "disk-full")) {
    nemesis.add({"disk-full", [this, &cluster, primary] { return inject(cluster, primary, "enospc"); }, heal, ttl / 4,
                 ttl, true});
  }
}

}  // namespace leasehold::torture
