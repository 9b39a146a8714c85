// torture/target.h: what a torture run tests: an embedded server or a
// cluster, started on loopback, with the server-side faults it offers.
//
// make_target() starts it (mode "embedded", "embedded-lease": the same
// server with `--durability lease`, "cluster-1etcd" or "cluster-3etcd"); the
// Target owns every process it started and kills them when destroyed.
// add_faults() adds this target's faults (run.h lists the names) to the
// nemesis; they close over the target, so the target must outlive the
// nemesis run. crash_and_recover() is the final crash of a run: kill -9 (of
// the embedded server, or of the cluster's primary), restart, and wait until
// it serves again.
// Errors: kUnavailable when it does not start or recover in time;
// kInvalidArgument for an unknown mode.
// Thread-safety: one owner thread. Every process it starts dies with the
// harness (testkit/subprocess.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"
#include "torture/nemesis.h"
#include "torture/run.h"

namespace leasehold::torture {

class Target {
 public:
  virtual ~Target() = default;
  // "127.0.0.1:port[,...]" for the clients.
  virtual std::string endpoints() const = 0;
  virtual void add_faults(const RunConfig& config, Nemesis& nemesis) = 0;
  virtual Status crash_and_recover() = 0;
  virtual void stop() = 0;
  // The process logs worth keeping next to a failing history (the server's;
  // in cluster mode every node's, one file per start, and every etcd
  // member's). Files that do not exist are skipped by the caller.
  virtual std::vector<std::string> log_paths() const = 0;
};

using Env = std::vector<std::pair<std::string, std::string>>;

// `dir`: a private directory for data and logs (outlives the target).
// `server_env`: environment of every server process (clock faults, shims;
// in cluster modes every node's).
Result<std::unique_ptr<Target>> make_target(const RunConfig& config, const std::string& dir, const Env& server_env);

bool wants_fault(const RunConfig& config, const std::string& fault);

// The network faults (torture/network_faults.cc): partition, one-way-loss,
// slow-link, each with the name suffix `path` ("" for the clients' link,
// "-node-etcd" for a node's link to etcd), applied to the proxies `pick`
// returns at its injection.
class FaultProxy;
bool is_network_fault(const std::string& fault);    // the clients' link
bool is_node_etcd_fault(const std::string& fault);  // a node's link to etcd
void add_network_faults(const RunConfig& config, Nemesis& nemesis,
                        const std::function<std::vector<FaultProxy*>()>& pick, const std::string& path = "");

}  // namespace leasehold::torture
