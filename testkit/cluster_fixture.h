// testkit/cluster_fixture.h: a real etcd cluster plus N `leasehold
// server --etcd ...` processes on 127.0.0.1, for the cluster tests.
// Thread-safety: one owner thread (the test's main thread).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "testkit/net.h"
#include "testkit/resp_client.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

struct ClusterNodeProcess {
  std::uint16_t port = 0;
  std::uint16_t tls_port = 0;  // set by a test's per-node arguments (--tls-listen), 0 = none
  // Set by a test's per-node arguments, for this (re)start and later ones:
  std::string etcd_endpoints;  // --etcd of this node ("" = every etcd member, directly)
  std::vector<std::pair<std::string, std::string>> env;  // extra environment (e.g. libfaketime)
  std::string data_dir;
  std::string stderr_path;  // of the latest (re)start
  Subprocess process;
  bool running() { return process.running(); }
};

class LeaseholdCluster {
 public:
  // Starts etcd (`etcd_members`) and `nodes` leasehold servers. Returns
  // nullptr (after ADD_FAILURE-style messages on stderr) on failure.
  static std::unique_ptr<LeaseholdCluster> start(int etcd_members, int nodes, std::vector<std::string> extra = {}) {
    return start_with({.members = etcd_members}, nodes, std::move(extra));
  }
  // Node i's own arguments (e.g. --tls-listen on a port it stores in the node;
  // it may also set the node's etcd_endpoints and env). Called at every (re)start.
  using PerNodeArgs = std::function<std::vector<std::string>(ClusterNodeProcess&)>;
  // As start(), with etcd started per `etcd_options` (e.g. TLS); `before_nodes`
  // runs once etcd is healthy, before any node starts (e.g. enable_auth).
  static std::unique_ptr<LeaseholdCluster> start_with(const EtcdClusterOptions& etcd_options, int nodes,
                                                      std::vector<std::string> extra,
                                                      const std::function<Status(EtcdCluster&)>& before_nodes = {},
                                                      PerNodeArgs per_node = {}) {
    auto c = std::unique_ptr<LeaseholdCluster>(new LeaseholdCluster());
    auto etcd = EtcdCluster::start(etcd_options);
    if (!etcd) {
      fprintf(stderr, "etcd: %s\n", etcd.status().to_string().c_str());
      return nullptr;
    }
    c->etcd_ = std::move(*etcd);
    if (before_nodes) {
      if (Status st = before_nodes(*c->etcd_); !st) {
        fprintf(stderr, "etcd setup: %s\n", st.to_string().c_str());
        return nullptr;
      }
    }
    c->extra_ = std::move(extra);
    c->per_node_ = std::move(per_node);
    for (int i = 0; i < nodes; ++i) {
      ClusterNodeProcess n;
      n.port = free_port();
      n.data_dir = c->dir_.path() + "/node" + std::to_string(i);
      c->nodes_.push_back(std::move(n));
      if (!c->spawn(i)) return nullptr;
    }
    return c;
  }

  bool spawn(int i) {
    ClusterNodeProcess& n = nodes_[static_cast<std::size_t>(i)];
    const std::vector<std::string> own = per_node_ ? per_node_(n) : std::vector<std::string>{};
    std::vector<std::string> argv = {leasehold_binary(), "server", "--listen", loopback(n.port),
                                     "--data-dir", n.data_dir, "--log-level", "info",
                                     "--etcd", n.etcd_endpoints.empty() ? etcd_->endpoints() : n.etcd_endpoints,
                                     "--cluster", "test"};
    // The timing defaults, unless the node's own arguments set one (the
    // server refuses an option given twice).
    for (const auto& [flag, value] : {std::pair<const char*, const char*>{"--etcd-lease-ttl", "2"},
                                      {"--etcd-timeout-ms", "1000"},
                                      {"--append-timeout-ms", "2000"}}) {
      if (std::find(own.begin(), own.end(), flag) == own.end()) argv.insert(argv.end(), {flag, value});
    }
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    argv.insert(argv.end(), own.begin(), own.end());
    SpawnOptions opts;
    opts.env = n.env;
    opts.stderr_path = n.data_dir + ".stderr." + std::to_string(++spawns_);
    n.stderr_path = opts.stderr_path;
    auto p = Subprocess::spawn(argv, opts);
    if (!p) {
      fprintf(stderr, "spawn: %s\n", p.status().to_string().c_str());
      return false;
    }
    n.process = std::move(p).value();
    if (wait_for_port(n.port, 20s)) return true;
    fprintf(stderr, "node %d did not listen; see %s\n", i, opts.stderr_path.c_str());
    return false;
  }

  // Starts one more node (same arguments as the others); its index, or -1.
  int add_node() {
    ClusterNodeProcess n;
    n.port = free_port();
    n.data_dir = dir_.path() + "/node" + std::to_string(nodes_.size());
    nodes_.push_back(std::move(n));
    return spawn(size() - 1) ? size() - 1 : -1;
  }

  EtcdCluster& etcd() { return *etcd_; }
  ClusterNodeProcess& node(int i) { return nodes_[static_cast<std::size_t>(i)]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  std::string endpoints() const {
    std::string out;
    for (const auto& n : nodes_) out += (out.empty() ? "" : ",") + loopback(n.port);
    return out;
  }

  // ROLE of node i: "primary"/"standby" (empty if unreachable).
  std::string role(int i) {
    auto c = RespClient::connect(node(i).port, 500ms);
    if (!c) return "";
    auto v = c->call({"ROLE"}, 1s);
    if (v.is_error() || v.elements.size() != 2) return "";
    return v.elements[0].str;
  }
  // The node that says it is primary, within scaled(timeout); -1 if none.
  int wait_primary(std::chrono::milliseconds timeout, int except = -1) {
    int primary = -1;
    eventually([&] {
      for (int i = 0; i < size(); ++i) {
        if (i != except && node(i).running() && role(i) == "primary") {
          primary = i;
          return true;
        }
      }
      return false;
    }, timeout, 50ms);
    return primary;
  }
  // An INFO field of node i ("" if unreachable).
  std::string info_field(int i, const std::string& key) {
    auto c = RespClient::connect(node(i).port, 500ms);
    if (!c) return "";
    auto v = c->call({"INFO"}, 1s);
    const std::string& text = v.str;
    const auto at = text.find(key + ":");
    if (at == std::string::npos) return "";
    const auto end = text.find('\r', at);
    return text.substr(at + key.size() + 1, end - at - key.size() - 1);
  }
  // True once node i's INFO field `key` reads `value` (polled up to scaled(timeout)).
  bool wait_info(int i, const std::string& key, const std::string& value, std::chrono::milliseconds timeout) {
    return eventually([&] { return info_field(i, key) == value; }, timeout, 50ms);
  }
  // True once every running node reports the same applied_revision (polled up to scaled(timeout)).
  bool wait_converged(std::chrono::milliseconds timeout) {
    return eventually([&] {
      std::string first;
      bool same = true;
      for (int i = 0; i < size(); ++i) {
        if (!node(i).running()) continue;
        const std::string r = info_field(i, "applied_revision");
        if (r.empty() || (!first.empty() && r != first)) same = false;
        if (first.empty()) first = r;
      }
      return same && !first.empty();
    }, timeout, 50ms);
  }
  std::string stderr_of(int i) const { return nodes_[static_cast<std::size_t>(i)].data_dir + ".stderr.*"; }
  // The last `lines` lines of each node's log (its latest start) and the
  // end of each etcd member's, for a failure message: the files die with
  // the fixture's directories.
  std::string log_tails(std::size_t lines = 40) {
    std::string out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const std::string text = read_file(nodes_[i].stderr_path);
      std::size_t from = text.size();
      for (std::size_t seen = 0; from > 0 && seen <= lines;) {
        if (text[--from] == '\n') ++seen;
      }
      if (from > 0) ++from;  // past the newline before the first line kept
      out += "--- node " + std::to_string(i) + " (" + nodes_[i].stderr_path + "), last lines:\n" +
             text.substr(from) + "\n";
    }
    for (int m = 0; m < etcd_->size(); ++m) {
      out += "--- etcd member " + std::to_string(m) + " (" + etcd_->endpoint(m) +
             (etcd_->running(m) ? "" : ", not running") + "), end of its log:\n" + etcd_->log_tail(m) + "\n";
    }
    return out;
  }

 private:
  LeaseholdCluster() = default;
  TempDir dir_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::vector<ClusterNodeProcess> nodes_;
  std::vector<std::string> extra_;
  PerNodeArgs per_node_;
  int spawns_ = 0;
};

}  // namespace leasehold::testing
