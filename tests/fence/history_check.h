// tests/fence/history_check.h: checks a concurrent history of fence
// admissions against the fencing rule.
//
// Each operation records when it started and ended (on one clock shared by
// all threads and processes: steady_clock is system-wide on Linux), the
// token it presented, whether it was admitted and the highest token the
// resource reported. The fencing rule as a linearizable max-register:
//   1. admitted => highest == token; stale => highest > token.
//   2. real-time order: if X ended before Y started, Y.highest >= X.highest
//      (in particular no token lower than an earlier-admitted one is
//      admitted afterwards).
//   3. every reported highest is a token some operation presented and got
//      admitted with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace leasehold::fence::testing {

struct Op {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t token = 0;
  bool admitted = false;
  std::uint64_t highest = 0;
};

// Returns "" if the history obeys the rule, else a description of the first
// violation found.
inline std::string check_fence_history(std::vector<Op> ops) {
  std::set<std::uint64_t> admitted_tokens;
  for (const Op& op : ops) {
    if (op.admitted) admitted_tokens.insert(op.token);
  }
  for (const Op& op : ops) {
    if (op.admitted && op.highest != op.token) {
      return "admitted token " + std::to_string(op.token) + " reported highest " +
             std::to_string(op.highest);
    }
    if (!op.admitted && op.highest <= op.token) {
      return "stale token " + std::to_string(op.token) + " rejected with highest " +
             std::to_string(op.highest) + " which is not higher";
    }
    if (!admitted_tokens.contains(op.highest)) {
      return "reported highest " + std::to_string(op.highest) + " was never admitted";
    }
  }
  // Sweep: ops sorted by start; `ended` sorted by end; track the max highest
  // among ops that ended strictly before the current op started.
  std::vector<Op> by_end = ops;
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.start_ns < b.start_ns; });
  std::sort(by_end.begin(), by_end.end(), [](const Op& a, const Op& b) { return a.end_ns < b.end_ns; });
  std::size_t e = 0;
  std::uint64_t max_before = 0;
  bool any_before = false;
  const Op* witness = nullptr;
  for (const Op& op : ops) {
    while (e < by_end.size() && by_end[e].end_ns < op.start_ns) {
      if (!any_before || by_end[e].highest > max_before) {
        max_before = by_end[e].highest;
        witness = &by_end[e];
      }
      any_before = true;
      ++e;
    }
    if (any_before && op.highest < max_before) {
      std::ostringstream out;
      out << "op with token " << op.token << (op.admitted ? " (admitted)" : " (stale)")
          << " saw highest " << op.highest << " after an op with token " << witness->token
          << " had already completed with highest " << max_before;
      return out.str();
    }
  }
  return "";
}

inline std::uint64_t max_admitted(const std::vector<Op>& ops) {
  std::uint64_t m = 0;
  for (const Op& op : ops) {
    if (op.admitted) m = std::max(m, op.token);
  }
  return m;
}

}  // namespace leasehold::fence::testing
