// torture/etcd_peer_links.h: FaultProxies on the links between etcd members
// (the `partition-etcd` fault of cluster-3etcd; docs/faults.md).
//
// Each member i advertises the port of a router proxy R_i as its peer URL
// (route() is the EtcdClusterOptions::peer_route). R_i hands each
// connection to the proxy of its dialer: link(j, i), a FaultProxy to
// member i's peer port that carries every connection member j opened to
// member i. The dialer is the etcd process holding the connection's other
// end (torture/socket_owner.h), recognised by the advertised peer URL in
// its arguments; connections of any other process go to member i directly.
// etcd's Raft traffic between j and i flows both ways on connections either
// of them opened, so cutting i from j takes link(i, j) and link(j, i).
//
// cut(a, b, mode) partitions both links between members a and b (kHold:
// bytes wait; kDrop: they are thrown away and the connections reset at
// heal). cut_one_way(from, to, mode) holds or loses every byte member
// `from` sends to member `to` and lets `to`'s bytes to `from` flow: on
// link(from, to) what the dialer sends (Direction::kClientToServer), on
// link(to, from) what comes back to the dialer (kServerToClient). A kDrop
// connection that lost bytes is reset at heal (a TCP stream cannot skip
// bytes). heal() heals every link.
// Errors: route() returns 0 when a proxy cannot start.
// Thread-safety: route() before the members start, from one thread; cut()
// and heal() from one thread afterwards. The routers read the ports under
// a mutex on the proxies' threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "torture/faults/fault_proxy.h"

namespace leasehold::torture {

class EtcdPeerLinks {
 public:
  explicit EtcdPeerLinks(int members);
  std::uint16_t route(int member, std::uint16_t peer_port);
  void cut(int a, int b, BlockMode mode);
  void cut_one_way(int from, int to, BlockMode mode);
  void heal();
  int members() const { return members_; }
  // The traffic of link(from, to) so far (from != to).
  FaultProxyStats link_stats(int from, int to) const;

 private:
  // The member whose etcd process opened the connection from source_port
  // to R_to; -1 if none.
  int dialer(std::uint16_t source_port, int to) const;

  int members_;
  mutable std::mutex mu_;
  std::vector<std::uint16_t> router_ports_;  // R_i's port, 0 until made
  std::vector<std::unique_ptr<FaultProxy>> routers_;
  // links_[from][to]: connections `from` opened to `to` (nullptr when from == to).
  std::vector<std::vector<std::unique_ptr<FaultProxy>>> links_;
};

}  // namespace leasehold::torture
