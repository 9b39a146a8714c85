// torture/etcd_one_way_fault.cc: see etcd_one_way_fault.h.
#include "torture/etcd_one_way_fault.h"

#include <random>
#include <utility>

namespace leasehold::torture {

Fault one_way_etcd_fault(std::shared_ptr<EtcdPeerLinks> links, std::function<int()> leader, std::uint64_t seed,
                         std::chrono::milliseconds ttl) {
  auto rng = std::make_shared<std::mt19937_64>(seed ^ 0x85ebca6bULL);
  auto pick = [rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(*rng); };
  auto inject = [links, leader = std::move(leader), pick] {
    const int n = links->members();
    const int kind = pick(4);  // 0, 1: from the leader; 2: to the leader; 3: any pair
    const int l = kind < 3 ? leader() : -1;
    int from = pick(n);
    int to = (from + 1 + pick(n - 1)) % n;
    if (l >= 0 && kind < 2) {
      from = l;
      to = (l + 1 + pick(n - 1)) % n;
    } else if (l >= 0) {
      to = l;
      from = (l + 1 + pick(n - 1)) % n;
    }
    links->cut_one_way(from, to, pick(2) == 0 ? BlockMode::kHold : BlockMode::kDrop);
    return Status();
  };
  auto heal = [links] {
    links->heal();
    return Status();
  };
  return Fault{"one-way-etcd", std::move(inject), std::move(heal), ttl / 4, ttl * 2, false};
}

}  // namespace leasehold::torture
