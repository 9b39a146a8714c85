// torture/embedded_target.cc: the embedded-mode Target (target.h) and
// make_target().
#include <algorithm>
#include <filesystem>

#include "torture/server_control.h"
#include "torture/target.h"

namespace leasehold::torture {

Result<std::unique_ptr<Target>> make_cluster_target(const RunConfig& config, const std::string& dir, int etcd_members);

namespace {

using std::chrono::milliseconds;

class EmbeddedTarget final : public Target {
 public:
  EmbeddedTarget(const RunConfig& c, const std::string& dir, const Env& env)
      : server_({dir + "/data", c.extra_server_flags, env, dir + "/server.stderr"}),
        data_dir_(dir + "/data"),
        log_(dir + "/server.stderr") {}
  Status start() { return server_.start(); }
  std::string endpoints() const override { return server_.endpoint(); }
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
                     return ec ? Status(ErrorCode::kIoError, "cannot remove the log: " + ec.message()) : Status();
                   },
                   [this] { return server_.restart(); }, milliseconds(100), milliseconds(1000), true});
    }
    if (wants_fault(c, "pause-server")) {
      nemesis.add({"pause-server", [this] { server_.pause(); return Status(); },
                   [this] { server_.resume(); return Status(); }, ttl / 4, ttl * 3 / 2, false});
    }
  }
  Status crash_and_recover() override {
    server_.kill9();
    return server_.restart();
  }
  void stop() override { server_.stop(); }
  std::string log_path() const override { return log_; }

 private:
  ServerControl server_;
  std::string data_dir_;
  std::string log_;
};

}  // namespace

bool wants_fault(const RunConfig& c, const std::string& fault) {
  return std::find(c.faults.begin(), c.faults.end(), fault) != c.faults.end();
}

Result<std::unique_ptr<Target>> make_target(const RunConfig& c, const std::string& dir, const Env& server_env) {
  if (c.mode == "embedded") {
    auto t = std::make_unique<EmbeddedTarget>(c, dir, server_env);
    if (Status st = t->start(); !st) return st;
    return std::unique_ptr<Target>(std::move(t));
  }
  if (c.mode == "cluster-1etcd" || c.mode == "cluster-3etcd") {
    if (!server_env.empty()) {
      return Status(ErrorCode::kInvalidArgument, "cluster modes do not take a server environment (clock faults) yet");
    }
    return make_cluster_target(c, dir, c.mode == "cluster-1etcd" ? 1 : 3);
  }
  return Status(ErrorCode::kInvalidArgument, "unknown mode " + c.mode);
}

}  // namespace leasehold::torture
