// torture/network_faults.cc: the network faults of a torture run, on
// FaultProxies (torture/faults/fault_proxy.h) of one network path: between
// the workers and the server (embedded: the one proxy; cluster: the
// primary's, chosen at each injection), or, in cluster modes, between a node
// and etcd (path "-node-etcd": the proxies of one node's etcd endpoints).
// The fault names are the kind plus the path's suffix:
//   partition     both ways, bytes held (TCP outlives it) or dropped (the
//                 connections that lost bytes are reset at heal), current
//                 connections sometimes reset at once
//   one-way-loss  one direction dropped: requests never arrive, or replies
//                 never come back (unknown outcomes)
//   slow-link     20-400 ms added each way, sometimes a rate cap
// Each is healed by FaultProxy::heal() of the proxies it hit. Faults picked
// with a seeded rng.
// Thread-safety: the faults run on the nemesis thread; the proxy is
// thread-safe.
#include <functional>
#include <string>
#include <memory>
#include <random>
#include <vector>

#include "torture/faults/fault_proxy.h"
#include "torture/nemesis.h"
#include "torture/run.h"
#include "torture/target.h"

namespace leasehold::torture {

bool is_network_fault(const std::string& name) {
  return name == "partition" || name == "one-way-loss" || name == "slow-link";
}

bool is_node_etcd_fault(const std::string& name) {
  return name == "partition-node-etcd" || name == "one-way-loss-node-etcd" || name == "slow-link-node-etcd";
}

void add_network_faults(const RunConfig& c, Nemesis& nemesis, const std::function<std::vector<FaultProxy*>()>& pick,
                        const std::string& path) {
  using std::chrono::milliseconds;
  const milliseconds ttl(c.ttl_ms);
  auto rng = std::make_shared<std::mt19937_64>(c.seed ^ 0x3c6ef372ULL ^ (path.empty() ? 0 : std::hash<std::string>{}(path)));
  auto coin = [rng] { return std::uniform_int_distribution<int>(0, 1)(*rng) == 1; };
  // Each kind remembers the proxies it hit (two kinds may overlap).
  auto make_heal = [](std::shared_ptr<std::vector<FaultProxy*>> hit) {
    return [hit] {
      for (FaultProxy* p : *hit) p->heal();
      hit->clear();
      return Status();
    };
  };
  if (wants_fault(c, "partition" + path)) {
    auto hit = std::make_shared<std::vector<FaultProxy*>>();
    nemesis.add({"partition" + path,
                 [hit, pick, coin] {
                   *hit = pick();
                   const BlockMode mode = coin() ? BlockMode::kHold : BlockMode::kDrop;
                   const bool reset = coin();
                   for (FaultProxy* p : *hit) p->partition(mode, reset);
                   return Status();
                 },
                 make_heal(hit), ttl / 4, ttl * 2, false});
  }
  if (wants_fault(c, "one-way-loss" + path)) {
    auto hit = std::make_shared<std::vector<FaultProxy*>>();
    nemesis.add({"one-way-loss" + path,
                 [hit, pick, coin] {
                   *hit = pick();
                   const Direction dir = coin() ? Direction::kClientToServer : Direction::kServerToClient;
                   for (FaultProxy* p : *hit) p->block(dir, BlockMode::kDrop);
                   return Status();
                 },
                 make_heal(hit), ttl / 4, ttl * 3 / 2, false});
  }
  if (wants_fault(c, "slow-link" + path)) {
    auto hit = std::make_shared<std::vector<FaultProxy*>>();
    nemesis.add({"slow-link" + path,
                 [hit, pick, rng, coin] {
                   *hit = pick();
                   const milliseconds delay(std::uniform_int_distribution<int>(20, 400)(*rng));
                   const std::uint64_t rate =
                       coin() ? static_cast<std::uint64_t>(std::uniform_int_distribution<int>(2000, 20000)(*rng)) : 0;
                   for (FaultProxy* p : *hit) {
                     p->set_delay(Direction::kClientToServer, delay);
                     p->set_delay(Direction::kServerToClient, delay);
                     p->set_rate(Direction::kServerToClient, rate);
                     p->set_rate(Direction::kClientToServer, rate);
                   }
                   return Status();
                 },
                 make_heal(hit), ttl / 2, ttl * 2, false});
  }
}

}  // namespace leasehold::torture
