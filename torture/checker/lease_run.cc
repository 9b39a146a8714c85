// torture/checker/lease_run.cc: lease_run(), see checker.h ("Lease runs").
#include <algorithm>

#include "torture/checker/checker.h"

namespace leasehold::torture {

bool LeaseRun::may_be_quarantined(const Op& op) const {
  return std::any_of(crashes.begin(), crashes.end(), [&](const Op* crash) {
    return op.inv < crash->cmp + quarantine_ns && op.cmp >= crash->inv;
  });
}

std::optional<LeaseRun> lease_run(const std::vector<Op>& history, const CheckOptions& options) {
  const auto record = std::find_if(history.begin(), history.end(), [](const Op& op) {
    return op.op == "durability" && op.value == "lease";
  });
  if (record == history.end()) return std::nullopt;
  LeaseRun run;
  std::int64_t longest_ttl_ms = record->limit;
  for (const Op& op : history) {
    if (op.op == "crash") run.crashes.push_back(&op);
    if (op.op == "cset") longest_ttl_ms = std::max(longest_ttl_ms, op.limit);
  }
  const double ttl_ns = static_cast<double>(longest_ttl_ms) * 1e6;
  const double with_drift = ttl_ns * (1 + options.drift_factor) + static_cast<double>(options.drift_fixed_ns);
  run.quarantine_ns = static_cast<std::int64_t>(with_drift / 0.98);
  return run;
}

}  // namespace leasehold::torture
