// torture/embedded_target.cc: the embedded-mode Target (target.h) and
// make_target(). With a disk fault selected (power-cut, disk-eio,
// disk-full) the server runs under the disk-fault shim (disk_faults.h);
// with a network fault selected (partition, one-way-loss, slow-link) the
// workers reach it through a FaultProxy (torture/faults/fault_proxy.h).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "torture/disk_faults.h"
#include "torture/faults/fault_proxy.h"
#include "torture/server_control.h"
#include "torture/target.h"

namespace leasehold::torture {

Result<std::unique_ptr<Target>> make_cluster_target(const RunConfig& config, int etcd_members, const Env& node_env);

namespace {

using std::chrono::milliseconds;

bool wants_any(const RunConfig& c, bool (*pred)(const std::string&)) {
  return std::any_of(c.faults.begin(), c.faults.end(), pred);
}

class EmbeddedTarget final : public Target {
 public:
  EmbeddedTarget(const RunConfig& c, const std::string& dir, const Env& env)
      : disk_{dir + "/data", dir + "/disk-control", dir + "/disk-journal"},
        shimmed_(wants_any(c, is_disk_fault)),
        server_({dir + "/data", c.extra_server_flags, shimmed_ ? shim_env(disk_, env) : env, dir + "/server.stderr"}),
        data_dir_(dir + "/data"),
        log_(dir + "/server.stderr"),
        rng_(c.seed ^ 0x9d2c5680ULL),
        final_power_cut_(shimmed_ && wants_fault(c, "power-cut")) {}
  Status start(const RunConfig& c) {
    if (shimmed_) {
      std::filesystem::create_directories(disk_.data_dir);
      if (Status st = set_control(disk_, ""); !st) return st;
    }
    if (Status st = server_.start(); !st) return st;
    if (wants_any(c, is_network_fault)) {
      auto proxy = FaultProxy::start(server_.port());
      if (!proxy) return proxy.status();
      proxy_ = std::move(proxy).value();
    }
    return Status();
  }
  std::string endpoints() const override {
    return proxy_ ? "127.0.0.1:" + std::to_string(proxy_->port()) : server_.endpoint();
  }
  void add_faults(const RunConfig& c, Nemesis& nemesis) override {
    const milliseconds ttl(c.ttl_ms);
    if (wants_fault(c, "kill")) {
      nemesis.add({"kill", [this] { server_.kill9(); return Status(); }, [this] { return server_.restart(); },
                   milliseconds(100), milliseconds(1500), true});
    }
    if (wants_fault(c, "kill-lose-log")) {
      // A disk that lost the whole log: an honest server must refuse to
      // start on it (the revision guard), so this fault is for runs against
      // the `reuse-token-after-restart` switch (docs/faults.md).
      nemesis.add({"kill-lose-log",
                   [this] {
                     server_.kill9();
                     std::error_code ec;
                     std::filesystem::remove_all(data_dir_ + "/rocksdb", ec);
                     // The journal too: it alone would give the entries back.
                     if (!ec) std::filesystem::remove(data_dir_ + "/journal", ec);
                     return ec ? Status(ErrorCode::kIoError, "cannot remove the log: " + ec.message()) : Status();
                   },
                   [this] { return server_.restart(); }, milliseconds(100), milliseconds(1000), true});
    }
    if (wants_fault(c, "pause-server")) {
      nemesis.add({"pause-server", [this] { server_.pause(); return Status(); },
                   [this] { server_.resume(); return Status(); }, ttl / 4, ttl * 3 / 2, false});
    }
    if (shimmed_) add_disk_faults(c, nemesis);
    if (proxy_) add_network_faults(c, nemesis, [this] { return std::vector<FaultProxy*>{proxy_.get()}; });
  }
  Status crash_and_recover() override {
    server_.kill9();
    if (final_power_cut_) {
      if (Status st = cut_power(disk_); !st) return st;
    }
    return server_.restart();
  }
  void stop() override { server_.stop(); }
  std::vector<std::string> log_paths() const override { return {log_}; }

 private:
  // The disk faults (disk_faults.h). A disk that failed (EIO) or filled up
  // stops the server's writes for good: the heal is a crash (kill -9, a
  // power cut over what it had not fsynced, the fault cleared, a restart).
  void add_disk_faults(const RunConfig& c, Nemesis& nemesis) {
    const milliseconds ttl(c.ttl_ms);
    auto restart_clean = [this] {
      server_.kill9();
      if (Status st = set_control(disk_, ""); !st) return st;
      if (Status st = cut_power(disk_); !st) return st;
      return server_.restart();
    };
    if (wants_fault(c, "power-cut")) {
      nemesis.add({"power-cut",
                   [this] {
                     server_.kill9();
                     return cut_power(disk_);
                   },
                   [this] { return server_.restart(); }, milliseconds(100), milliseconds(1500), true});
    }
    if (wants_fault(c, "disk-eio")) {
      nemesis.add({"disk-eio",
                   [this] {
                     const bool fsync = std::uniform_int_distribution<int>(0, 1)(rng_) == 1;
                     return set_control(disk_, fsync ? "eio-fsync" : "eio-write");
                   },
                   restart_clean, ttl / 4, ttl, true});
    }
    if (wants_fault(c, "disk-full")) {
      nemesis.add({"disk-full", [this] { return set_control(disk_, "enospc"); }, restart_clean, ttl / 4, ttl,
                   true});
    }
  }

  DiskFaultFiles disk_;
  bool shimmed_;
  ServerControl server_;
  std::string data_dir_;
  std::string log_;
  std::mt19937_64 rng_;
  bool final_power_cut_;
  std::unique_ptr<FaultProxy> proxy_;  // destroyed before the server
};

}  // namespace

bool wants_fault(const RunConfig& c, const std::string& fault) {
  return std::find(c.faults.begin(), c.faults.end(), fault) != c.faults.end();
}

Result<std::unique_ptr<Target>> make_target(const RunConfig& c, const std::string& dir, const Env& server_env) {
  if (c.mode == "embedded" || is_lease_mode(c.mode)) {
    RunConfig server_config = c;
    if (is_lease_mode(c.mode)) {
      server_config.extra_server_flags.insert(server_config.extra_server_flags.begin(), {"--durability", "lease"});
    }
    auto t = std::make_unique<EmbeddedTarget>(server_config, dir, server_env);
    if (Status st = t->start(server_config); !st) return st;
    return std::unique_ptr<Target>(std::move(t));
  }
  if (c.mode == "cluster-1etcd" || c.mode == "cluster-3etcd") {
    return make_cluster_target(c, c.mode == "cluster-1etcd" ? 1 : 3, server_env);
  }
  return Status(ErrorCode::kInvalidArgument, "unknown mode " + c.mode);
}

}  // namespace leasehold::torture
