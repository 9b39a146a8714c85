// torture/cluster_target.cc: the cluster-mode Target (target.h): three
// leasehold nodes on a 1- or 3-member etcd (testkit/cluster_fixture.h,
// etcd lease TTL 2 s), every node under the run's server environment (the
// clock modes: libfaketime).
//
// Faults (RunConfig::faults names; the embedded names map onto the primary):
//   kill          kill -9 of the primary, restarted after the hold (a crash)
//   kill-standby  kill -9 of a standby, restarted after the hold
//   pause-server  SIGSTOP of the primary past its etcd lease (a zombie primary)
//   kill-etcd     kill -9 of one etcd member (with 1 member: the majority)
//   kill-etcd-majority  two of three etcd members (3-member etcd only)
//   pause-etcd    SIGSTOP of one etcd member
//   partition, one-way-loss, slow-link  on the clients' link to the primary
//                 (every node's link when there is no primary), through the
//                 proxies in front of the nodes (torture/cluster_links.h)
//   partition-node-etcd, one-way-loss-node-etcd, slow-link-node-etcd  the
//                 same kinds on one node's link to etcd (all its etcd
//                 endpoints): the primary's three times in four, else a
//                 random node's
//   partition-etcd  (3-member etcd) one etcd member cut from the two others
//                 (a minority), or one time in five every member from every
//                 other (no majority), through the proxies on the links
//                 between members (torture/etcd_peer_links.h)
//   disk-eio-etcd, disk-full-etcd, power-cut-etcd  one etcd member's disk
//                 fails or fills, or it is killed and loses what it had not
//                 fsynced (every member's data dir on a fault filesystem of
//                 its own: torture/etcd_disk_faults.h)
//   disk-eio, disk-full  one node's disk fails or fills up, healed by a
//                 crash (torture/cluster_disk_faults.h)
//   one-way-etcd  (3-member etcd) every byte from one member to another lost
//                 or held, the other way flowing (torture/etcd_one_way_fault.h)
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"
#include "torture/cluster_disk_faults.h"
#include "torture/cluster_links.h"
#include "torture/etcd_disk_faults.h"
#include "torture/etcd_one_way_fault.h"
#include "torture/etcd_peer_links.h"
#include "torture/faults/fault_proxy.h"
#include "torture/target.h"

namespace leasehold::torture {
namespace {

using std::chrono::milliseconds;

class ClusterTarget final : public Target {
 public:
  ClusterTarget(std::unique_ptr<testing::LeaseholdCluster> cluster, std::uint64_t seed,
                std::shared_ptr<ClusterLinks> links, std::shared_ptr<EtcdPeerLinks> peer_links,
                std::shared_ptr<EtcdDisks> disks, std::shared_ptr<ClusterDiskFaults> disk)
      : disks_(std::move(disks)),
        cluster_(std::move(cluster)),
        rng_(seed ^ 0xc2b2ae35ULL),
        links_(std::move(links)),
        peer_links_(std::move(peer_links)),
        disk_(std::move(disk)) {}

  std::string endpoints() const override {
    const std::string proxied = links_->client_endpoints();
    return proxied.empty() ? cluster_->endpoints() : proxied;
  }

  void add_faults(const RunConfig& c, Nemesis& nemesis) override {
    auto& cl = *cluster_;
    if (wants_fault(c, "kill")) {
      nemesis.add({"kill-primary", [this] { return kill_node(true); }, [this] { return respawn(); },
                   milliseconds(200), milliseconds(2000), true});
    }
    if (wants_fault(c, "kill-standby")) {
      nemesis.add({"kill-standby", [this] { return kill_node(false); }, [this] { return respawn(); },
                   milliseconds(200), milliseconds(2000), false});
    }
    if (wants_fault(c, "pause-server")) {
      nemesis.add({"pause-primary",
                   [this] {
                     pause_victim_ = primary();
                     if (pause_victim_ < 0) return Status(ErrorCode::kUnavailable, "no primary to pause");
                     cluster_->node(pause_victim_).process.signal(SIGSTOP);
                     return Status();
                   },
                   [this] {
                     if (pause_victim_ >= 0) cluster_->node(pause_victim_).process.signal(SIGCONT);
                     pause_victim_ = -1;
                     return Status();
                   },
                   milliseconds(2500), milliseconds(5000), false});
    }
    const int members = cl.etcd().size();
    if (wants_fault(c, "kill-etcd")) {
      nemesis.add({"kill-etcd", [this, members] { etcd_victims_ = {pick(members)}; return kill_etcd(); },
                   [this] { return restart_etcd(); }, milliseconds(500), milliseconds(3000), true});
    }
    if (wants_fault(c, "kill-etcd-majority") && members == 3) {
      nemesis.add({"kill-etcd-majority",
                   [this] {
                     const int keep = pick(3);
                     etcd_victims_ = {(keep + 1) % 3, (keep + 2) % 3};
                     return kill_etcd();
                   },
                   [this] { return restart_etcd(); }, milliseconds(500), milliseconds(3000), true});
    }
    if (wants_fault(c, "pause-etcd")) {
      nemesis.add({"pause-etcd",
                   [this, members] {
                     etcd_paused_ = pick(members);
                     cluster_->etcd().pause(etcd_paused_);
                     return Status();
                   },
                   [this] {
                     if (etcd_paused_ >= 0) cluster_->etcd().resume(etcd_paused_);
                     etcd_paused_ = -1;
                     return Status();
                   },
                   milliseconds(500), milliseconds(3000), false});
    }
    add_network_faults(c, nemesis, [this] {
      const int p = primary();
      FaultProxy* proxy = p >= 0 ? links_->client_proxy(cluster_->node(p).port) : nullptr;
      return proxy != nullptr ? std::vector<FaultProxy*>{proxy} : links_->all_client_proxies();
    });
    add_network_faults(
        c, nemesis,
        [this] {
          const int p = primary();
          const int victim = p >= 0 && pick(4) != 0 ? p : pick(cluster_->size());
          return links_->etcd_proxies(cluster_->node(victim).port);
        },
        "-node-etcd");
    if (wants_fault(c, "partition-etcd") && peer_links_) {
      nemesis.add({"partition-etcd",
                   [this] {
                     const BlockMode mode = pick(2) == 0 ? BlockMode::kHold : BlockMode::kDrop;
                     const int n = peer_links_->members();
                     const int alone = pick(n);
                     const bool no_majority = pick(5) == 0;
                     for (int a = 0; a < n; ++a) {
                       for (int b = a + 1; b < n; ++b) {
                         if (no_majority || a == alone || b == alone) peer_links_->cut(a, b, mode);
                       }
                     }
                     return Status();
                   },
                   [this] {
                     peer_links_->heal();
                     return Status();
                   },
                   milliseconds(1000), milliseconds(4000), false});
    }
    if (disks_) add_etcd_disk_faults(c, nemesis, *disks_, cl.etcd(), [this](int n) { return pick(n); });
    if (wants_fault(c, "one-way-etcd") && peer_links_) {
      nemesis.add(one_way_etcd_fault(
          peer_links_, [this] { return cluster_->etcd().leader(milliseconds(2000)); }, c.seed,
          milliseconds(c.ttl_ms)));
    }
    if (disk_) disk_->add_faults(c, nemesis, *cluster_, [this] { return primary(); });
  }

  Status crash_and_recover() override {
    if (Status st = kill_node(true); !st) return st;
    if (Status st = respawn(); !st) return st;
    return primary() >= 0 ? Status() : Status(ErrorCode::kUnavailable, "no primary after the final crash");
  }
  void stop() override {}  // the fixture kills every process when destroyed
  std::vector<std::string> log_paths() const override {
    std::vector<std::string> paths;
    for (int i = 0; i < cluster_->size(); ++i) {  // <data_dir>.stderr.<start>, one per start
      const std::filesystem::path data = cluster_->node(i).data_dir;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(data.parent_path(), ec)) {
        if (e.path().filename().string().rfind(data.filename().string() + ".stderr.", 0) == 0) {
          paths.push_back(e.path().string());
        }
      }
    }
    for (int i = 0; i < cluster_->etcd().size(); ++i) paths.push_back(cluster_->etcd().log_path(i));
    return paths;
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  int primary() { return cluster_->wait_primary(testing::scaled(milliseconds(15'000))); }

  Status kill_node(bool want_primary) {
    const int p = primary();
    if (p < 0) return {ErrorCode::kUnavailable, "no primary"};
    const int victim = want_primary ? p : (p + 1 + pick(cluster_->size() - 1)) % cluster_->size();
    killed_.push_back(victim);
    cluster_->node(victim).process.kill9();
    return {};
  }
  // Restarts the node killed last (faults heal in reverse order).
  Status respawn() {
    if (killed_.empty()) return {};
    const int i = killed_.back();
    killed_.pop_back();
    if (cluster_->node(i).running()) return {};
    return cluster_->spawn(i) ? Status() : Status(ErrorCode::kUnavailable, "node did not restart");
  }
  Status kill_etcd() {
    for (int i : etcd_victims_) cluster_->etcd().kill(i);
    return {};
  }
  Status restart_etcd() {
    for (int i : etcd_victims_) {
      if (Status st = cluster_->etcd().restart(i); !st) return st;
    }
    etcd_victims_.clear();
    return {};
  }

  std::shared_ptr<EtcdDisks> disks_;  // first: unmounted after etcd died; null without etcd disk faults
  std::unique_ptr<testing::LeaseholdCluster> cluster_;
  std::mt19937_64 rng_;
  // Each fault keeps its own victims, so that two faults can overlap.
  std::vector<int> killed_;  // killed nodes, last killed last
  int pause_victim_ = -1;   // paused node
  std::vector<int> etcd_victims_;  // killed etcd members
  int etcd_paused_ = -1;    // paused etcd member
  std::shared_ptr<ClusterLinks> links_;          // the fault proxies of the nodes' links
  std::shared_ptr<EtcdPeerLinks> peer_links_;    // between etcd members; null without partition-etcd, one-way-etcd
  std::shared_ptr<ClusterDiskFaults> disk_;      // the nodes' disk shim; null without disk-eio, disk-full
};

}  // namespace

Result<std::unique_ptr<Target>> make_cluster_target(const RunConfig& c, int etcd_members, const Env& node_env) {
  const bool clients = std::any_of(c.faults.begin(), c.faults.end(), is_network_fault);
  const bool node_etcd = std::any_of(c.faults.begin(), c.faults.end(), is_node_etcd_fault);
  auto links = std::make_shared<ClusterLinks>(clients, node_etcd, node_env);
  auto before_nodes = [links](testing::EtcdCluster& etcd) {
    std::vector<std::uint16_t> ports;
    for (int i = 0; i < etcd.size(); ++i) ports.push_back(etcd.client_port(i));
    links->set_etcd_ports(std::move(ports));
    return Status();
  };
  auto disk = wants_cluster_disk_faults(c) ? std::make_shared<ClusterDiskFaults>(c.seed) : nullptr;
  // Called at every (re)start of a node, from the main thread.
  auto per_node = [links, disk](testing::ClusterNodeProcess& n) {
    std::vector<std::string> args = links->node_setup(n);
    if (disk) for (std::string& a : disk->node_setup(n)) args.push_back(std::move(a));
    return args;
  };
  testing::EtcdClusterOptions etcd_options{.members = etcd_members};
  std::shared_ptr<EtcdPeerLinks> peer_links;
  if ((wants_fault(c, "partition-etcd") || wants_fault(c, "one-way-etcd")) && etcd_members > 1) {
    peer_links = std::make_shared<EtcdPeerLinks>(etcd_members);
    etcd_options.peer_route = [peer_links](int member, std::uint16_t port) { return peer_links->route(member, port); };
  }
  std::shared_ptr<EtcdDisks> disks;
  if (std::any_of(c.faults.begin(), c.faults.end(), is_etcd_disk_fault)) {
    disks = std::make_shared<EtcdDisks>();
    etcd_options.data_dir_route = [disks](int member, const std::string&) { return disks->route(member); };
  }
  auto cluster = testing::LeaseholdCluster::start_with(etcd_options, 3, c.extra_server_flags, before_nodes, per_node);
  if (!cluster) return Status(ErrorCode::kUnavailable, "the cluster did not start (see stderr)");
  if (!links->complete(cluster->size())) return Status(ErrorCode::kIoError, "a fault proxy did not start");
  if (cluster->wait_primary(testing::scaled(milliseconds(30'000))) < 0) {
    return Status(ErrorCode::kUnavailable, "the cluster elected no primary");
  }
  return std::unique_ptr<Target>(
      std::make_unique<ClusterTarget>(std::move(cluster), c.seed, links, peer_links, disks, disk));
}

}  // namespace leasehold::torture
