// torture/checker/fencing.cc: check (a), see checker.h.
#include <map>
#include <algorithm>

#include "torture/checker/checker.h"

namespace leasehold::torture {

std::vector<Violation> check_fencing(const std::vector<Op>& history) {
  std::vector<Violation> out;
  // The register: accepted writes per key, in acceptance order (the order of
  // the register's own records, which it writes under its lock).
  std::map<std::string, std::uint64_t> highest;
  for (const Op& op : history) {
    if (op.op != "reg") continue;
    if (op.out == Outcome::kOk) {
      auto [it, fresh] = highest.emplace(op.key, op.token);
      if (!fresh) {
        if (op.token <= it->second) {
          out.push_back({"fencing", "register " + op.key + " accepted token " + std::to_string(op.token) +
                                        " after token " + std::to_string(it->second)});
        }
        it->second = std::max(it->second, op.token);
      }
    } else if (op.out == Outcome::kFail && op.cmp2 != 0 && op.cmp < op.cmp2) {
      // Refused while the writer's session was still safely live: someone
      // with a higher token wrote while this holder held the lock.
      out.push_back({"fencing", "register " + op.key + " refused token " + std::to_string(op.token) + " of process " +
                                    std::to_string(op.process) + " while its hold was live (write done at " +
                                    std::to_string(op.cmp) + " ns, safe deadline " + std::to_string(op.cmp2) + ")"});
    }
  }
  // FENCE.PUT: an acknowledged put never has a token below a put that was
  // acknowledged before it was sent.
  std::map<std::string, std::vector<const Op*>> puts;
  for (const Op& op : history) {
    if (op.op == "fput" && op.out == Outcome::kOk) puts[op.key].push_back(&op);
  }
  for (auto& [key, list] : puts) {
    std::vector<const Op*> by_cmp = list;
    std::sort(by_cmp.begin(), by_cmp.end(), [](const Op* a, const Op* b) { return a->cmp < b->cmp; });
    std::sort(list.begin(), list.end(), [](const Op* a, const Op* b) { return a->inv < b->inv; });
    std::size_t i = 0;
    const Op* best = nullptr;  // highest-token put completed before the current invoke
    for (const Op* op : list) {
      while (i < by_cmp.size() && by_cmp[i]->cmp < op->inv) {
        if (best == nullptr || by_cmp[i]->token > best->token) best = by_cmp[i];
        ++i;
      }
      if (best != nullptr && op->token < best->token) {
        out.push_back({"fencing", "FENCE.PUT " + key + " acknowledged token " + std::to_string(op->token) +
                                      " after token " + std::to_string(best->token) + " was acknowledged"});
      }
    }
  }
  return out;
}

}  // namespace leasehold::torture
