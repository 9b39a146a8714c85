// torture/cluster_links.cc: see cluster_links.h.
#include "torture/cluster_links.h"

namespace leasehold::torture {
namespace {

std::string loopback_list(const std::vector<std::uint16_t>& ports, const std::string& scheme) {
  std::string out;
  for (std::uint16_t p : ports) out += (out.empty() ? "" : ",") + scheme + "127.0.0.1:" + std::to_string(p);
  return out;
}

}  // namespace

std::vector<std::string> ClusterLinks::node_setup(testing::ClusterNodeProcess& node) {
  node.env = node_env_;
  if (want_node_etcd_) {
    auto& proxies = node_etcd_[node.port];
    if (proxies.empty()) {
      for (std::uint16_t member : etcd_ports_) {
        auto proxy = FaultProxy::start(member);
        if (!proxy) break;
        proxies.push_back(std::move(proxy).value());
      }
    }
    std::vector<std::uint16_t> ports;
    for (const auto& p : proxies) ports.push_back(p->port());
    node.etcd_endpoints = proxies.size() == etcd_ports_.size() ? loopback_list(ports, "http://") : "";
  }
  if (!want_clients_) return {};
  auto it = clients_.find(node.port);
  if (it == clients_.end()) {
    auto proxy = FaultProxy::start(node.port);
    if (!proxy) return {};
    it = clients_.emplace(node.port, std::move(proxy).value()).first;
  }
  return {"--advertise", "127.0.0.1:" + std::to_string(it->second->port())};
}

bool ClusterLinks::complete(int nodes) const {
  if (want_clients_ && static_cast<int>(clients_.size()) != nodes) return false;
  if (!want_node_etcd_) return true;
  if (static_cast<int>(node_etcd_.size()) != nodes) return false;
  for (const auto& [port, proxies] : node_etcd_) {
    if (proxies.size() != etcd_ports_.size()) return false;
  }
  return true;
}

std::string ClusterLinks::client_endpoints() const {
  std::vector<std::uint16_t> ports;
  for (const auto& [node_port, proxy] : clients_) ports.push_back(proxy->port());
  return loopback_list(ports, "");
}

FaultProxy* ClusterLinks::client_proxy(std::uint16_t node_port) const {
  auto it = clients_.find(node_port);
  return it == clients_.end() ? nullptr : it->second.get();
}

std::vector<FaultProxy*> ClusterLinks::all_client_proxies() const {
  std::vector<FaultProxy*> out;
  for (const auto& [node_port, proxy] : clients_) out.push_back(proxy.get());
  return out;
}

std::vector<FaultProxy*> ClusterLinks::etcd_proxies(std::uint16_t node_port) const {
  std::vector<FaultProxy*> out;
  auto it = node_etcd_.find(node_port);
  if (it == node_etcd_.end()) return out;
  for (const auto& p : it->second) out.push_back(p.get());
  return out;
}

}  // namespace leasehold::torture
