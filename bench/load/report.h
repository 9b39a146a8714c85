// bench/load/report.h: renders suite results: the side-by-side table, a CSV
// for machines, and the project's goals checked against the numbers.
//
// Columns follow `targets` order. Ratio columns "leasehold/<t>" appear for
// every non-leasehold target when a target named "leasehold" is present.
// Fairness (max/min cycles per client) is shown for W2 rows only; "inf"
// when some client got no grant at all.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/load/suite.h"

namespace leasehold::bench {

std::string format_table(const std::vector<Row>& rows, const std::vector<Target>& targets);

// Header: workload,clients,target,ops_per_s,max_per_client,min_per_client,error
std::string format_csv(const std::vector<Row>& rows, const std::vector<Target>& targets);

// The goals from the benchmark brief, each with the measured numbers and
// "met" / "NOT met" ("n/a" when a needed cell was not run):
//   W1 at the largest C: leasehold >= redis-default
//   W2 at the largest C: leasehold >= 10x every Redis spin-lock variant, and
//   leasehold max/min grants per client <= 1.05
std::string format_goals(const std::vector<Row>& rows);

// True when some cell reported an error.
bool any_errors(const std::vector<Row>& rows);

}  // namespace leasehold::bench
