// torture/run.h: one torture run against an embedded server or a cluster
// (RunConfig::mode: embedded, embedded-lease, cluster-1etcd, cluster-3etcd;
// target.h): start it, start the worker processes, let the nemesis inject
// faults, heal, check liveness and the final state, then check the merged
// history (history_check.h).
//
// A run that could not go to the end is still checked up to where it
// stopped, and its violations count like any other run's:
//   - a worker exited with an error, or did not start: the run goes on with
//     the others; RunResult::stopped_early says which and why;
//   - no primary (in embedded mode: no server) answered within the bound
//     after the final crash: the final checks are skipped, and
//     RunResult::no_primary holds the error, a liveness finding of its own
//     (not a violation of a safety check, and not hidden as a start error).
//
// Clock modes (RunConfig::clock), in every mode (in cluster modes on every
// node; etcd keeps the real clock):
//   "none"      no libfaketime
//   "wall"      the server(s) and the workers run under libfaketime with the
//               monotonic clock untouched; the `clock-wall` fault steps
//               their wall clock by +1 h or -1 h (must change nothing)
//   "rate:X"    the server's clocks (monotonic too) run X times as fast for
//               the whole run, e.g. rate:1.005 (inside the 1 % drift bound:
//               must stay safe) or rate:1.5 (outside: expected to break the
//               safe deadline, see docs/RELIABILITY.md); libfaketime
//               runs behind torture/faults/clock_wait_shim.cc, which keeps
//               its rate mode from hanging condition-variable waits
// Fault names (RunConfig::faults): kill (kill -9 + restart of the server),
// pause-server (SIGSTOP/SIGCONT, up to 1.5 TTL), pause-client (SIGSTOP of a
// worker past its TTL, preferring one that holds a lock), clock-wall (only
// with clock "wall"), and the network faults partition, one-way-loss,
// slow-link on the clients' link (torture/network_faults.cc; in cluster
// modes through a proxy in front of each node); in cluster modes also
// kill-standby, kill-etcd, kill-etcd-majority, pause-etcd, the same three
// network kinds on a node's link to etcd (partition-node-etcd,
// one-way-loss-node-etcd, slow-link-node-etcd) and, with 3 etcd members,
// partition-etcd and one-way-etcd between members, and disk-eio-etcd,
// disk-full-etcd, power-cut-etcd on one etcd member's disk
// (torture/etcd_disk_faults.h) (torture/cluster_target.cc; there kill and
// pause-server hit the primary); in embedded mode also the disk faults
// power-cut, disk-eio, disk-full (torture/disk_faults.h) and kill-lose-log
// (opt-in). A fault the mode lacks is skipped.
// extra_server_flags / extra_server_env go to every server start, every
// node's in cluster modes (the hooks for `--unsafe-test-fault NAME` and
// LD_PRELOAD fault shims).
// Errors: kUnavailable when the server or cluster could not be started
// (nothing ran, so there is no history to check); kIoError when a history
// file cannot be read.
// Thread-safety: run_once blocks the caller; one run per call.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"
#include "torture/checker/checker.h"

namespace leasehold::torture {

struct RunConfig {
  std::string mode = "embedded";
  std::uint64_t seed = 1;
  int seconds = 20;
  int workers = 4;
  int ttl_ms = 2000;
  int keys = 2;
  // >= 0: the workers open their sessions with ONCLOSE and this close grace
  // (<= ttl_ms; worker.h); -1: without.
  int close_grace_ms = -1;
  std::vector<std::string> faults = {"kill", "pause-server", "pause-client"};
  std::string clock = "none";
  std::vector<std::string> extra_server_flags;
  std::vector<std::pair<std::string, std::string>> extra_server_env;
  std::string self_exe;      // this binary, for the worker processes
  std::string failures_dir;  // where a failing history is kept
  bool keep_history = false;  // keep it even when the run passed
};

struct RunResult {
  std::uint64_t seed = 0;
  std::string clock;
  std::size_t ops = 0;  // client operations (acquire, release, fput, fget, cset, cdel, reg)
  std::map<std::string, int> faults;
  std::vector<Violation> violations;
  std::vector<std::string> unchecked;  // keys past the linearizability budget
  std::string history_path;            // kept history, "" if none
  std::string stopped_early;           // why the run did not go to the end; "" if it did
  std::string no_primary;              // the final crash's recovery error (a liveness finding); "" if none
};

// The modes a run can have (RunConfig::mode), in the order `--mode mixed`
// takes them in turn.
const std::vector<std::string>& run_modes();
// True for the mode whose server answers before its writes are durable
// (embedded-lease: `--durability lease`); its history starts with a
// `durability` record for the checker.
bool is_lease_mode(const std::string& mode);

Result<RunResult> run_once(const RunConfig& config);

// Checks one history file (a kept failure): the violations, including one
// per line that does not parse (history_check.h).
Result<std::vector<Violation>> check_file(const std::string& path);

}  // namespace leasehold::torture
