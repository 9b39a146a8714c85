// torture/etcd_peer_links.cc: see etcd_peer_links.h.
#include "torture/etcd_peer_links.h"

#include <string>

#include "torture/socket_owner.h"

namespace leasehold::torture {

EtcdPeerLinks::EtcdPeerLinks(int members)
    : members_(members),
      router_ports_(static_cast<std::size_t>(members), 0),
      routers_(static_cast<std::size_t>(members)),
      links_(static_cast<std::size_t>(members)) {
  for (auto& row : links_) row.resize(static_cast<std::size_t>(members));
}

std::uint16_t EtcdPeerLinks::route(int member, std::uint16_t peer_port) {
  const auto to = static_cast<std::size_t>(member);
  std::vector<std::uint16_t> link_ports(static_cast<std::size_t>(members_), 0);
  for (std::size_t from = 0; from < links_.size(); ++from) {
    if (from == to) continue;
    auto proxy = FaultProxy::start(peer_port);
    if (!proxy) return 0;
    link_ports[from] = (*proxy)->port();
    links_[from][to] = std::move(proxy).value();
  }
  auto router = FaultProxy::start(peer_port, 0, [this, member, link_ports](std::uint16_t source_port) {
    const int from = dialer(source_port, member);
    return from < 0 ? std::uint16_t{0} : link_ports[static_cast<std::size_t>(from)];
  });
  if (!router) return 0;
  std::lock_guard lock(mu_);
  router_ports_[to] = (*router)->port();
  routers_[to] = std::move(router).value();
  return router_ports_[to];
}

int EtcdPeerLinks::dialer(std::uint16_t source_port, int to) const {
  std::vector<std::uint16_t> ports;
  {
    std::lock_guard lock(mu_);
    ports = router_ports_;
  }
  const pid_t pid = loopback_socket_owner(source_port, ports[static_cast<std::size_t>(to)], "etcd");
  if (pid < 0) return -1;
  const std::vector<std::string> args = process_cmdline(pid);
  for (std::size_t k = 0; k + 1 < args.size(); ++k) {
    if (args[k] != "--initial-advertise-peer-urls") continue;
    for (std::size_t m = 0; m < ports.size(); ++m) {
      if (static_cast<int>(m) != to && args[k + 1] == "http://127.0.0.1:" + std::to_string(ports[m])) {
        return static_cast<int>(m);
      }
    }
  }
  return -1;
}

void EtcdPeerLinks::cut(int a, int b, BlockMode mode) {
  links_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]->partition(mode, mode == BlockMode::kDrop);
  links_[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)]->partition(mode, mode == BlockMode::kDrop);
}

void EtcdPeerLinks::cut_one_way(int from, int to, BlockMode mode) {
  links_[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)]->block(Direction::kClientToServer, mode);
  links_[static_cast<std::size_t>(to)][static_cast<std::size_t>(from)]->block(Direction::kServerToClient, mode);
}

FaultProxyStats EtcdPeerLinks::link_stats(int from, int to) const {
  return links_[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)]->stats();
}

void EtcdPeerLinks::heal() {
  for (auto& row : links_) {
    for (auto& link : row) {
      if (link) link->heal();
    }
  }
}

}  // namespace leasehold::torture
