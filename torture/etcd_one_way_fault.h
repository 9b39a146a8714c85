// torture/etcd_one_way_fault.h: the `one-way-etcd` fault of cluster-3etcd:
// every byte one etcd member sends to another is lost (or held) while the
// other way flows (EtcdPeerLinks::cut_one_way; docs/torture.md).
//
// At each injection the fault picks an ordered pair (A, B) of members and
// cuts A -> B, bytes held or dropped (a coin), for TTL/4 to 2 x TTL:
//   - half the time A is the Raft leader and B a random follower: B hears
//     no heartbeat, campaigns, and its higher term (which flows) deposes A;
//   - a quarter of the time B is the leader and A a random follower: the
//     leader never hears A's acknowledgements or votes while A keeps
//     hearing its heartbeats;
//   - otherwise a random ordered pair (leader or not).
// Without a leader (none within 2 s, e.g. no majority running) the pair is
// random. heal() heals every peer link (also a partition-etcd's, which may
// be in place at the same time: faults heal together, in reverse order).
// `leader` returns the leader's member index or -1; it runs on the
// nemesis thread, as do inject and heal.
// Errors: none (inject and heal always succeed).
// Thread-safety: the Fault's functions run on the nemesis thread only; the
// links are thread-safe for cut/heal from that one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "torture/etcd_peer_links.h"
#include "torture/nemesis.h"

namespace leasehold::torture {

Fault one_way_etcd_fault(std::shared_ptr<EtcdPeerLinks> links, std::function<int()> leader, std::uint64_t seed,
                         std::chrono::milliseconds ttl);

}  // namespace leasehold::torture
