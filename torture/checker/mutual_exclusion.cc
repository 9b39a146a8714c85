// torture/checker/mutual_exclusion.cc: check (c), see checker.h.
#include <algorithm>
#include <map>

#include "torture/checker/checker.h"

namespace leasehold::torture {
namespace {

std::string describe(const Op& h) {
  return "process " + std::to_string(h.process) + " token " + std::to_string(h.token) + " (" + h.mode + ") live " +
         std::to_string(h.inv) + ".." + std::to_string(h.cmp);
}

}  // namespace

std::vector<Op> compat_holds(const std::vector<Op>& history, const CheckOptions& options) {
  std::vector<Op> holds;
  for (const Op& set : history) {
    if (set.op != "cset" || set.out != Outcome::kOk) continue;
    const std::int64_t px_ns = set.limit * 1'000'000;
    const auto margin = static_cast<std::int64_t>(static_cast<double>(px_ns) * options.drift_factor) +
                        options.drift_fixed_ns;
    std::int64_t end = set.inv + px_ns - margin;
    for (const Op& del : history) {
      if (del.op == "cdel" && del.key == set.key && del.value == set.value && del.inv >= set.cmp) {
        end = std::min(end, del.inv);
      }
    }
    Op h;
    h.op = "hold";
    h.process = set.process;
    h.key = "compat:" + set.key;
    h.mode = "exclusive";
    h.inv = set.cmp;
    h.cmp = end;
    h.token = set.token;
    holds.push_back(std::move(h));
  }
  return holds;
}

std::vector<Violation> check_mutual_exclusion(const std::vector<Op>& history, const CheckOptions& options) {
  std::vector<Violation> out;
  std::map<std::string, std::vector<Op>> per_lock;
  for (const Op& op : history) {
    if (op.op == "hold" && op.cmp > op.inv) per_lock[op.key].push_back(op);
  }
  for (Op& h : compat_holds(history, options)) {
    if (h.cmp > h.inv) per_lock[h.key].push_back(std::move(h));
  }
  for (auto& [lock, holds] : per_lock) {
    std::sort(holds.begin(), holds.end(), [](const Op& a, const Op& b) { return a.inv < b.inv; });
    // Sweep: the holds still live at each start.
    std::vector<const Op*> live;
    for (const Op& h : holds) {
      std::erase_if(live, [&](const Op* l) { return l->cmp <= h.inv; });
      for (const Op* l : live) {
        const bool both_shared = h.mode == "shared" && l->mode == "shared";
        const bool both_semaphore = h.mode == "semaphore" && l->mode == "semaphore";
        if (!both_shared && !both_semaphore) {
          out.push_back({"mutual-exclusion", lock + ": " + describe(*l) + " overlaps " + describe(h)});
        }
      }
      live.push_back(&h);
      if (h.mode == "semaphore") {
        const auto held = std::count_if(live.begin(), live.end(), [](const Op* l) { return l->mode == "semaphore"; });
        if (h.limit > 0 && held > h.limit) {
          out.push_back({"mutual-exclusion", lock + ": " + std::to_string(held) + " semaphore permits live (limit " +
                                                 std::to_string(h.limit) + ") at " + describe(h)});
        }
      }
    }
  }
  return out;
}

}  // namespace leasehold::torture
