// torture/checker/token_order.cc: check (b), see checker.h.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "torture/checker/checker.h"

namespace leasehold::torture {
namespace {

bool is_grant(const Op& op) {
  return (op.op == "acquire" || op.op == "cset") && op.out == Outcome::kOk && op.token != 0;
}

// Which stretch between crashes a time falls in: 2k after the k-th crash
// window (kill to answering again) and before the next one, 2k + 1 inside
// the next one. Replies inside one window may come from the process that
// was killed or from the one that replaced it: grants answered in one
// window are taken for one command's, like grants answered between the same
// two windows (a lease-mode restart grants nothing for its quarantine, so
// there the two cannot mix).
int epoch_of(std::int64_t t, const std::vector<const Op*>& crashes) {
  int before = 0;
  bool inside = false;
  for (const Op* c : crashes) {
    if (t >= c->cmp) {
      ++before;
    } else if (t >= c->inv) {
      inside = true;
    }
  }
  return 2 * before + (inside ? 1 : 0);
}

// Whether one applied command could have made all of `grants` (one token):
// all acquires (no compat SET: it grants only itself), all pending at one
// instant, all answered in the same stretch (epoch_of), and on each lock only
// shared readers or semaphore permits (never two writers, never a writer
// beside readers).
bool one_command(const std::vector<const Op*>& grants, const std::vector<const Op*>& crashes) {
  std::int64_t last_sent = 0;
  std::int64_t first_answered = grants.front()->cmp;
  const int epoch = epoch_of(grants.front()->cmp, crashes);
  std::map<std::string, std::vector<const Op*>> per_lock;
  for (const Op* g : grants) {
    if (g->op != "acquire" || epoch_of(g->cmp, crashes) != epoch) return false;
    last_sent = std::max(last_sent, g->inv);
    first_answered = std::min(first_answered, g->cmp);
    per_lock[g->key].push_back(g);
  }
  if (last_sent > first_answered) return false;
  for (const auto& [lock, on_lock] : per_lock) {
    if (on_lock.size() < 2) continue;
    const std::string& mode = on_lock.front()->mode;
    if (mode != "shared" && mode != "semaphore") return false;
    for (const Op* g : on_lock) {
      if (g->mode != mode) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<Violation> check_token_order(const std::vector<Op>& history) {
  std::vector<Violation> out;
  // Uniqueness: a token belongs to one grant, unless one applied command
  // made every grant with it (docs/core.md: a release waking readers, the
  // end of a lock-delay or of a `lease` quarantine granting the waiters of
  // several locks).
  std::vector<const Op*> crashes;
  for (const Op& op : history) {
    if (op.op == "crash") crashes.push_back(&op);
  }
  std::map<std::uint64_t, std::vector<const Op*>> by_token;
  for (const Op& op : history) {
    if (is_grant(op)) by_token[op.token].push_back(&op);
  }
  for (const auto& [token, grants] : by_token) {
    if (grants.size() < 2) continue;
    if (!one_command(grants, crashes)) {
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
