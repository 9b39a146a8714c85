// torture/cluster_target.cc: the cluster-mode Target (target.h): three
// leasehold nodes on a 1- or 3-member etcd (tests/cluster/cluster_fixture.h,
// etcd lease TTL 2 s).
//
// Faults (RunConfig::faults names; the embedded names map onto the primary):
//   kill          kill -9 of the primary, restarted after the hold (a crash)
//   kill-standby  kill -9 of a standby, restarted after the hold
//   pause-server  SIGSTOP of the primary past its etcd lease (a zombie primary)
//   kill-etcd     kill -9 of one etcd member (with 1 member: the majority)
//   kill-etcd-majority  two of three etcd members (3-member etcd only)
//   pause-etcd    SIGSTOP of one etcd member
//   partition, one-way-loss, slow-link  on the clients' link to the primary:
//                 with one of them selected, each node gets a FaultProxy in
//                 front of it and advertises the proxy's port (--advertise),
//                 so the workers and the redirects go through the proxies
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "tests/cluster/cluster_fixture.h"
#include "tests/support/eventually.h"
#include "torture/faults/fault_proxy.h"
#include "torture/target.h"

namespace leasehold::torture {
namespace {

using std::chrono::milliseconds;

// A node's port -> the proxy in front of it (made when the node first starts).
using NodeProxies = std::map<std::uint16_t, std::unique_ptr<FaultProxy>>;

class ClusterTarget final : public Target {
 public:
  ClusterTarget(std::unique_ptr<testing::LeaseholdCluster> cluster, std::uint64_t seed,
                std::shared_ptr<NodeProxies> proxies)
      : cluster_(std::move(cluster)), rng_(seed ^ 0xc2b2ae35ULL), proxies_(std::move(proxies)) {}

  std::string endpoints() const override {
    if (proxies_->empty()) return cluster_->endpoints();
    std::string out;
    for (const auto& [port, proxy] : *proxies_) {
      out += (out.empty() ? "127.0.0.1:" : ",127.0.0.1:") + std::to_string(proxy->port());
    }
    return out;
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
    if (!proxies_->empty()) {
      add_network_faults(c, nemesis, [this] {
        std::vector<FaultProxy*> out;
        const int p = primary();
        if (p >= 0) {
          auto it = proxies_->find(cluster_->node(p).port);
          if (it != proxies_->end()) out.push_back(it->second.get());
        }
        if (out.empty()) {  // no primary: every node's link
          for (auto& [port, proxy] : *proxies_) out.push_back(proxy.get());
        }
        return out;
      });
    }
  }

  Status crash_and_recover() override {
    if (Status st = kill_node(true); !st) return st;
    if (Status st = respawn(); !st) return st;
    return primary() >= 0 ? Status() : Status(ErrorCode::kUnavailable, "no primary after the final crash");
  }
  void stop() override {}  // the fixture kills every process when destroyed
  std::string log_path() const override { return ""; }

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

  std::unique_ptr<testing::LeaseholdCluster> cluster_;
  std::mt19937_64 rng_;
  // Each fault keeps its own victims, so that two faults can overlap.
  std::vector<int> killed_;  // killed nodes, last killed last
  int pause_victim_ = -1;   // paused node
  std::vector<int> etcd_victims_;  // killed etcd members
  int etcd_paused_ = -1;    // paused etcd member
  std::shared_ptr<NodeProxies> proxies_;  // empty without network faults
};

}  // namespace

Result<std::unique_ptr<Target>> make_cluster_target(const RunConfig& c, const std::string& /*dir*/, int etcd_members) {
  auto proxies = std::make_shared<NodeProxies>();
  testing::LeaseholdCluster::PerNodeArgs per_node;
  if (std::any_of(c.faults.begin(), c.faults.end(), is_network_fault)) {
    // Called at every (re)start of a node, from the main thread.
    per_node = [proxies](testing::ClusterNodeProcess& n) -> std::vector<std::string> {
      auto it = proxies->find(n.port);
      if (it == proxies->end()) {
        auto proxy = FaultProxy::start(n.port);
        if (!proxy) return {};
        it = proxies->emplace(n.port, std::move(proxy).value()).first;
      }
      return {"--advertise", "127.0.0.1:" + std::to_string(it->second->port())};
    };
  }
  auto cluster = testing::LeaseholdCluster::start_with({.members = etcd_members}, 3, c.extra_server_flags, {}, per_node);
  if (!cluster) return Status(ErrorCode::kUnavailable, "the cluster did not start (see stderr)");
  if (cluster->wait_primary(testing::scaled(milliseconds(30'000))) < 0) {
    return Status(ErrorCode::kUnavailable, "the cluster elected no primary");
  }
  if (per_node && proxies->size() != 3) return Status(ErrorCode::kIoError, "a fault proxy did not start");
  return std::unique_ptr<Target>(std::make_unique<ClusterTarget>(std::move(cluster), c.seed, proxies));
}

}  // namespace leasehold::torture
