// bench/load/report.h: renders suite results: the side-by-side table, a CSV
// for machines, and the project's goals checked against the numbers.
//
// Columns follow `targets` order. Ratio columns "lh/<t>" appear for every
// non-leasehold target when a target named "leasehold" is present, then any
// explicit ratio pairs.
// Fairness (max/min cycles per client) is shown for W2 rows only; "inf"
// when some client got no grant at all.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/load/suite.h"

namespace leasehold::bench {

// A ratio column "<numerator>/<denominator>" of two target names, e.g.
// leasehold-on-etcd over etcd's own mutex on the same etcd.
struct RatioPair {
  std::string numerator;
  std::string denominator;
  // Optional (etcd goals only): an etcd-txn target on the same etcd; its C=1
  // W2 rate (sequential fenced writes/s) is the ceiling of one durable
  // hand-off per grant, printed next to the W2 goal.
  std::string floor{};
};

// `ratios`: extra ratio columns after the automatic "lh/<t>" ones.
std::string format_table(const std::vector<Row>& rows, const std::vector<Target>& targets,
                         const std::vector<RatioPair>& ratios = {});

// Header: workload,clients,target,ops_per_s,max_per_client,min_per_client,error
std::string format_csv(const std::vector<Row>& rows, const std::vector<Target>& targets);

// The goals from the benchmark brief, each with the measured numbers and
// "met" / "NOT met" ("n/a" when a needed cell was not run):
//   W1 at the largest C: leasehold >= redis-default
//   W2 at the largest C: leasehold >= 10x every Redis spin-lock variant, and
//   leasehold max/min grants per client <= 1.05
std::string format_goals(const std::vector<Row>& rows);

// The goals of leasehold-on-etcd against etcd's own mutex (issue 6), for
// each pair (numerator = leasehold-on-etcd, denominator = etcd mutex), at
// the largest C:
//   W1: numerator >= 5x denominator
//   W2: numerator >= 20x denominator, and numerator max/min grants per
//       client <= 1.2; with a `floor` target, also the grants/s that 20x
//       needs next to the floor's sequential write rate (C=1), and whether
//       the goal is above that ceiling
std::string format_etcd_goals(const std::vector<Row>& rows, const std::vector<RatioPair>& pairs);

// True when some cell reported an error.
bool any_errors(const std::vector<Row>& rows);

}  // namespace leasehold::bench
