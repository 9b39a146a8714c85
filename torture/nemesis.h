// torture/nemesis.h: faults injected at random (seeded) during a run.
//
// A Fault is a name, an inject() that puts it in place, a heal() that
// takes it away, and how long it stays. Any kind plugs in through add():
// the harness adds its kinds in torture/run.cc (SIGSTOP of a client,
// wall-clock steps) and in each Target's add_faults() (kill -9 + restart
// and SIGSTOP of a server: torture/embedded_target.cc,
// torture/cluster_target.cc); a network partition of a fault proxy or a
// disk-full of a shim is just another Fault.
//
// run() loops until its stop_token is requested: a random gap, then one
// fault chosen uniformly among those added (one time in three, two
// different ones at once, counted under "(combined)"; never two etcd kills,
// nor a disk-* fault with another crash), held for a random
// duration in [min_hold, max_hold] (the longer of the two), then healed
// (in reverse order). A kind's inject/heal must tolerate another kind
// being in place (e.g. SIGCONT of a killed server is harmless). Each fault becomes one history record
// (`fault`, or `crash` when Fault::crash: inv = injected, cmp = healed).
// A fault in place when stop is requested is healed before run() returns.
// An inject/heal error is recorded in the record's aux and counted.
// Thread-safety: add() before run(); counts() after run() returned.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <stop_token>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "torture/history.h"

namespace leasehold::torture {

struct Fault {
  std::string name;
  std::function<Status()> inject;
  std::function<Status()> heal;
  std::chrono::milliseconds min_hold{500};
  std::chrono::milliseconds max_hold{2000};
  bool crash = false;  // recorded as `crash` (the durability check uses it)
};

class Nemesis {
 public:
  Nemesis(std::uint64_t seed, HistoryWriter& history, std::chrono::milliseconds min_gap,
          std::chrono::milliseconds max_gap)
      : rng_(seed), history_(history), min_gap_(min_gap), max_gap_(max_gap) {}
  void add(Fault fault) { faults_.push_back(std::move(fault)); }
  bool empty() const { return faults_.empty(); }
  void run(std::stop_token stop);
  // Injections per fault name; errors under "<name>:error".
  const std::map<std::string, int>& counts() const { return counts_; }

 private:
  std::chrono::milliseconds pick(std::chrono::milliseconds lo, std::chrono::milliseconds hi);
  static bool compatible(const Fault& a, const Fault& b);
  std::mt19937_64 rng_;
  HistoryWriter& history_;
  std::chrono::milliseconds min_gap_, max_gap_;
  std::vector<Fault> faults_;
  std::map<std::string, int> counts_;
};

// Waits up to `d` or until stop is requested; false when stopped.
bool wait_or_stop(std::stop_token stop, std::chrono::milliseconds d);

}  // namespace leasehold::torture
