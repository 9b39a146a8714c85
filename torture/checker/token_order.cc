// torture/checker/token_order.cc: check (b), see checker.h.
#include <algorithm>
#include <map>

#include "torture/checker/checker.h"

namespace leasehold::torture {
namespace {

bool is_grant(const Op& op) {
  return (op.op == "acquire" || op.op == "cset") && op.out == Outcome::kOk && op.token != 0;
}

}  // namespace

std::vector<Violation> check_token_order(const std::vector<Op>& history) {
  std::vector<Violation> out;
  // Uniqueness: a token belongs to one grant, unless every grant with it is
  // a shared grant of one lock (readers woken by one command).
  std::map<std::uint64_t, std::vector<const Op*>> by_token;
  for (const Op& op : history) {
    if (is_grant(op)) by_token[op.token].push_back(&op);
  }
  for (const auto& [token, grants] : by_token) {
    if (grants.size() < 2) continue;
    const bool all_shared = std::all_of(grants.begin(), grants.end(), [&](const Op* g) {
      return g->op == "acquire" && g->mode == "shared" && g->key == grants.front()->key;
    });
    if (!all_shared) {
      out.push_back({"token-order", "token " + std::to_string(token) + " granted " + std::to_string(grants.size()) +
                                        " times (first: " + grants[0]->key + " to process " +
                                        std::to_string(grants[0]->process) + ", then " + grants[1]->key +
                                        " to process " + std::to_string(grants[1]->process) + ")"});
    }
  }
  // Real-time order: sweep the acquires by invoke time, keeping the highest
  // token of the grants acknowledged before.
  std::vector<const Op*> acquires;
  std::vector<const Op*> granted;
  for (const Op& op : history) {
    if (op.op == "acquire" || op.op == "cset") acquires.push_back(&op);
    if (is_grant(op)) granted.push_back(&op);
  }
  std::sort(acquires.begin(), acquires.end(), [](const Op* a, const Op* b) { return a->inv < b->inv; });
  std::sort(granted.begin(), granted.end(), [](const Op* a, const Op* b) { return a->cmp < b->cmp; });
  std::size_t i = 0;
  const Op* best = nullptr;
  for (const Op* op : acquires) {
    while (i < granted.size() && granted[i]->cmp < op->inv) {
      if (best == nullptr || granted[i]->token > best->token) best = granted[i];
      ++i;
    }
    if (is_grant(*op) && best != nullptr && op->token <= best->token) {
      out.push_back({"token-order", "grant of " + op->key + " to process " + std::to_string(op->process) +
                                        " has token " + std::to_string(op->token) + ", not above token " +
                                        std::to_string(best->token) + " of " + best->key +
                                        " acknowledged before it was sent"});
    }
  }
  return out;
}

}  // namespace leasehold::torture
