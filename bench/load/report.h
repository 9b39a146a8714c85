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

#include "bench/load/ceiling.h"
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
  // Optional (etcd goals only, with `floor`): an etcd-logtxn target on the
  // same etcd; its C=1 W2 rate (sequential writes shaped like leasehold's
  // log append) gives a "limit:" line under the W2 goal.
  std::string log_floor{};
};

// `ratios`: extra ratio columns after the automatic "lh/<t>" ones.
// `ceiling` (valid): a "ceiling" column (W1 rows: the batching ceiling at
// that C; W2 rows: the hand-off ceiling) and "<t>/ceiling" for every
// leasehold target.
std::string format_table(const std::vector<Row>& rows, const std::vector<Target>& targets,
                         const std::vector<RatioPair>& ratios = {},
                         const Ceiling* ceiling = nullptr);

// The latency table: the same rows and columns, each cell "p50/p99" in ms:
// W1 the acquire latency (ACQUIRE sent -> granted), W2 the hand-off latency
// (the previous holder's release sent -> the next grant); "-" when none.
std::string format_latency_table(const std::vector<Row>& rows, const std::vector<Target>& targets);

// Header: workload,clients,target,ops_per_s,max_per_client,min_per_client,error,
//         acquire_p50_us,acquire_p99_us,handoff_p50_us,handoff_p99_us
std::string format_csv(const std::vector<Row>& rows, const std::vector<Target>& targets);

// The client count the goals are judged at: 32 when it ran, else the largest.
int goal_clients(const std::vector<Row>& rows);

// The speed goals (docs/bench.md, "Reading the table") at goal_clients(),
// each with the measured numbers
// and "met" / "NOT met" ("n/a" when a needed cell or the ceiling is missing):
//   W1 leasehold >= 0.8x the batching ceiling and >= 1.5x redis-always;
//   W2 leasehold >= 0.8x the hand-off ceiling, >= 2x every redis-always
//   spin-lock row, and max/min grants per client <= 1.05;
//   with a target named "leasehold-lease": W1 >= 1.0x redis-default, W2 >=
//   2x the redis-default r=0 spin-lock, max/min <= 1.05.
// Then the ratios to redis-default, for the record.
std::string format_goals(const std::vector<Row>& rows, const Ceiling* ceiling = nullptr);

// The goals of leasehold-on-etcd, for each pair (numerator =
// leasehold-on-etcd, denominator = etcd mutex), at goal_clients():
//   W1: numerator >= 5x denominator
//   W2: numerator >= 0.8x the `floor` target's C=1 W2 rate (etcd's
//       sequential fenced write rate; n/a without a floor), and
//       numerator max/min grants per client <= 1.2; the ratio to
//       the mutex is printed for the record (the 20x goal was withdrawn)
std::string format_etcd_goals(const std::vector<Row>& rows, const std::vector<RatioPair>& pairs);

// True when some cell reported an error.
bool any_errors(const std::vector<Row>& rows);

}  // namespace leasehold::bench
