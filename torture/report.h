// torture/report.h: the torture suite's record, a compact aggregate of
// every run counted so far (not a log of runs), and its markdown form (the
// torture section of docs/RELIABILITY.md).
//
// The aggregate adds up across clones: it is kept in the repository
// (docs/reliability/totals.json, section "torture"; totals_file.h reads and
// writes it), and `leasehold-torture report` folds the summary lines of new
// runs (run_summary.h, written under build/) into it.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "torture/run_summary.h"

namespace leasehold::torture {

struct ModeTotals {
  int runs = 0;              // runs whose history was checked
  std::uint64_t ops = 0;     // their client operations
  std::int64_t ms = 0;       // their wall time
  int violations = 0;        // violations found in them (stopped-early runs included)
  int stopped_early = 0;     // checked runs that did not go to the end
  int no_primary = 0;        // of those: no primary after the final crash (a liveness finding)
  int not_checked = 0;       // runs whose history was never checked (see Totals)
  void add(const ModeTotals& other);
};

struct FaultTotals {
  int injected = 0;                     // times injected, all modes
  std::map<std::string, int> by_mode;   // mode -> times injected
  int runs = 0;                         // checked runs that injected it
  std::uint64_t ops = 0;                // their operations
  int violations = 0;                   // their violations
};

// A run's provenance: the commit it was built from and its date (UTC, ISO 8601).
struct RunStamp {
  std::string commit;
  std::string date;
};

struct Totals {
  std::map<std::string, ModeTotals> modes;  // embedded, embedded-lease, cluster-1etcd, cluster-3etcd
  std::map<std::string, int> clocks;        // none, wall, rate:1.005 ... -> checked runs
  std::map<std::string, FaultTotals> faults;  // by the name the nemesis counts (kill-primary, disk-eio:error, ...)
  std::map<std::string, int> checks;        // check -> violations
  int unchecked_keys = 0;                   // key histories past the linearizability budget
  RunStamp first;                           // the earliest run counted ("" when none)
  RunStamp last;                            // the latest run counted

  // Folds one run in. not_checked counts a run whose server or cluster did
  // not start (and, in the runs recorded before the harness checked every
  // run, one that could not run to the end).
  void add(const RunSummary& run);
  ModeTotals all() const;  // the sum over the modes
};

// Every fault kind `run --faults` accepts, in the order the docs list them.
const std::vector<std::string>& known_fault_kinds();

// The torture section of docs/RELIABILITY.md: the commit and date range,
// runs by mode and clock, faults by kind (per mode; the kinds never
// injected are named), violations by check.
std::string render_markdown(const Totals& totals);

}  // namespace leasehold::torture
