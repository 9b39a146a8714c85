// torture/cluster_links.h: the FaultProxies of a cluster-mode torture run
// (torture/faults/fault_proxy.h), made when a node first starts and kept
// over its restarts:
//   - the clients' link: one proxy in front of each node; the node
//     advertises the proxy's port (--advertise), so the workers and the
//     standbys' redirects go through it;
//   - the node's link to etcd: one proxy per (node, etcd member), forwarding
//     to the member's client port; the node's --etcd names its proxies.
// node_setup() is the fixture's per-node hook (testkit/cluster_fixture.h):
// it makes the node's proxies on its first start and sets its --etcd, its
// environment and its --advertise. A proxy that cannot start leaves that
// node without it: complete() tells.
// Errors: none thrown; complete() is false when a proxy is missing.
// Thread-safety: node_setup() and the accessors run on the thread that
// starts nodes and injects faults (the main thread); the proxies
// themselves are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "testkit/cluster_fixture.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::torture {

class ClusterLinks {
 public:
  using Env = std::vector<std::pair<std::string, std::string>>;
  // clients / node_etcd: which links get proxies; node_env: every node's
  // environment (clock faults).
  ClusterLinks(bool clients, bool node_etcd, Env node_env)
      : want_clients_(clients), want_node_etcd_(node_etcd), node_env_(std::move(node_env)) {}

  // Before the first node starts: the etcd members' client ports.
  void set_etcd_ports(std::vector<std::uint16_t> ports) { etcd_ports_ = std::move(ports); }
  std::vector<std::string> node_setup(testing::ClusterNodeProcess& node);
  // True when every node started so far has all the proxies asked for.
  bool complete(int nodes) const;

  // "127.0.0.1:port,..." of the clients' proxies; "" without them.
  std::string client_endpoints() const;
  // The proxy in front of the node listening on `node_port` (nullptr: none).
  FaultProxy* client_proxy(std::uint16_t node_port) const;
  std::vector<FaultProxy*> all_client_proxies() const;
  // The node's proxies to each etcd member (empty: none).
  std::vector<FaultProxy*> etcd_proxies(std::uint16_t node_port) const;

 private:
  bool want_clients_;
  bool want_node_etcd_;
  Env node_env_;
  std::vector<std::uint16_t> etcd_ports_;
  std::map<std::uint16_t, std::unique_ptr<FaultProxy>> clients_;                 // by node port
  std::map<std::uint16_t, std::vector<std::unique_ptr<FaultProxy>>> node_etcd_;  // by node port
};

}  // namespace leasehold::torture
