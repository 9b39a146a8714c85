// torture/checker/linearizability.cc: see linearizability.h.
#include "torture/checker/linearizability.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace leasehold::torture {
namespace {

struct State {
  bool has = false;
  std::string value;
  std::uint64_t token = 0;
  std::int64_t expire_lb = 0;  // compat: no expiry before this (ns)
  friend bool operator<(const State& a, const State& b) {
    return std::tie(a.has, a.value, a.token, a.expire_lb) < std::tie(b.has, b.value, b.token, b.expire_lb);
  }
};

// Every state the op may leave behind from `s` (empty: illegal here).
std::vector<State> step(const State& s, const Op& op, const CheckOptions& options) {
  std::vector<State> next;
  if (op.op == "fput") {
    const bool can_apply = !s.has || s.token <= op.token;
    State applied{true, op.value, op.token, 0};
    if (op.out == Outcome::kOk) {
      if (can_apply) next.push_back(applied);
    } else if (op.out == Outcome::kFail) {
      next.push_back(s);
    } else {
      next.push_back(s);
      if (can_apply) next.push_back(applied);
    }
  } else if (op.op == "fget") {
    const bool match = op.token == 0 ? !s.has : (s.has && s.token == op.token && s.value == op.value);
    if (match) next.push_back(s);
  } else if (op.op == "crash") {
    next.push_back(State{});
  } else if (op.op == "cset" || op.op == "cdel") {
    std::vector<State> before{s};
    if (s.has && op.cmp >= s.expire_lb) before.push_back(State{});  // expired first
    for (const State& p : before) {
      if (op.op == "cset") {
        const std::int64_t px_ns = op.limit * 1'000'000;
        const auto margin = static_cast<std::int64_t>(static_cast<double>(px_ns) * options.drift_factor) +
                            options.drift_fixed_ns;
        State set{true, op.value, op.token, op.inv + px_ns - margin};
        if (op.out != Outcome::kFail && !p.has) next.push_back(set);
        if (op.out != Outcome::kOk && (op.out == Outcome::kUnknown || p.has)) next.push_back(p);
      } else {
        const bool hit = p.has && p.value == op.value;
        if (op.out != Outcome::kFail && hit) next.push_back(State{});
        if (op.out != Outcome::kOk && (op.out == Outcome::kUnknown || !hit)) next.push_back(p);
      }
    }
  }
  return next;
}

struct Node {
  int op = -1;
  bool is_call = false;
  Node* match = nullptr;
  Node* prev = nullptr;
  Node* next = nullptr;
};

void lift(Node* call) {
  call->prev->next = call->next;
  if (call->next != nullptr) call->next->prev = call->prev;
  Node* ret = call->match;
  ret->prev->next = ret->next;
  if (ret->next != nullptr) ret->next->prev = ret->prev;
}

void unlift(Node* call) {
  Node* ret = call->match;
  ret->prev->next = ret;
  if (ret->next != nullptr) ret->next->prev = ret;
  call->prev->next = call;
  if (call->next != nullptr) call->next->prev = call;
}

}  // namespace

Linearizable check_key_linearizable(const std::vector<Op>& all, const CheckOptions& options) {
  std::vector<Op> ops;
  for (const Op& op : all) {
    if (op.op == "fget" && op.out != Outcome::kOk) continue;  // an unanswered read constrains nothing
    ops.push_back(op);
  }
  const std::size_t n = ops.size();
  if (n == 0) return Linearizable::kYes;
  constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();
  struct Event {
    std::int64_t time;
    bool is_call;
    int op;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<int>(i);
    events.push_back({ops[i].inv, true, id});
    events.push_back({ops[i].out == Outcome::kUnknown ? kForever : std::max(ops[i].cmp, ops[i].inv), false, id});
  }
  // Calls before returns at equal times: such ops count as concurrent.
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.is_call && !b.is_call;
  });
  std::vector<Node> nodes(events.size() + 1);
  Node* head = &nodes[0];
  std::vector<Node*> call_of(n), ret_of(n);
  for (std::size_t i = 0; i < events.size(); ++i) {
    Node* node = &nodes[i + 1];
    node->op = events[i].op;
    node->is_call = events[i].is_call;
    node->prev = &nodes[i];
    nodes[i].next = node;
    (events[i].is_call ? call_of : ret_of)[static_cast<std::size_t>(events[i].op)] = node;
  }
  for (std::size_t i = 0; i < n; ++i) {
    call_of[i]->match = ret_of[i];
    ret_of[i]->match = call_of[i];
  }

  struct Frame {
    Node* entry;
    State state;
    std::size_t next_choice;
  };
  std::vector<Frame> stack;
  std::vector<std::uint64_t> linearized((n + 63) / 64, 0);
  std::set<std::pair<std::vector<std::uint64_t>, State>> cache;
  State state;
  Node* entry = head->next;
  std::size_t choice = 0;
  std::size_t steps = 0;
  while (head->next != nullptr) {
    if (++steps > options.linearizability_budget) return Linearizable::kBudgetExhausted;
    if (entry->is_call) {
      const auto op = static_cast<std::size_t>(entry->op);
      const std::vector<State> candidates = step(state, ops[op], options);
      bool moved = false;
      for (std::size_t c = choice; c < candidates.size(); ++c) {
        std::vector<std::uint64_t> bits = linearized;
        bits[op / 64] |= std::uint64_t{1} << (op % 64);
        if (cache.emplace(std::move(bits), candidates[c]).second) {
          stack.push_back({entry, state, c + 1});
          state = candidates[c];
          linearized[op / 64] |= std::uint64_t{1} << (op % 64);
          lift(entry);
          entry = head->next;
          choice = 0;
          moved = true;
          break;
        }
      }
      if (!moved) {
        entry = entry->next;
        choice = 0;
      }
    } else {
      if (stack.empty()) return Linearizable::kNo;
      Frame f = std::move(stack.back());
      stack.pop_back();
      state = std::move(f.state);
      const auto op = static_cast<std::size_t>(f.entry->op);
      linearized[op / 64] &= ~(std::uint64_t{1} << (op % 64));
      unlift(f.entry);
      entry = f.entry;
      choice = f.next_choice;
    }
  }
  return Linearizable::kYes;
}

std::vector<Violation> check_linearizable(const std::vector<Op>& history, const CheckOptions& options,
                                          std::vector<std::string>* unchecked) {
  const std::optional<LeaseRun> lease = lease_run(history, options);
  std::map<std::string, std::vector<Op>> per_key;
  for (const Op& op : history) {
    if (op.op == "fput" || op.op == "fget") per_key["fence:" + op.key].push_back(op);
    if (op.op == "cset" || op.op == "cdel") {
      // A SET NX refused while a quarantine may have been in force says
      // nothing about the key: left out, like an unanswered read.
      if (lease && op.op == "cset" && op.out == Outcome::kFail && lease->may_be_quarantined(op)) continue;
      per_key["compat:" + op.key].push_back(op);
    }
  }
  if (lease) {
    for (auto& [key, ops] : per_key) {
      if (key.rfind("compat:", 0) != 0) continue;
      for (const Op* crash : lease->crashes) ops.push_back(*crash);
    }
  }
  std::vector<Violation> out;
  for (const auto& [key, ops] : per_key) {
    switch (check_key_linearizable(ops, options)) {
      case Linearizable::kYes: break;
      case Linearizable::kNo:
        out.push_back({"linearizability", key + ": no linearization of its " + std::to_string(ops.size()) + " ops"});
        break;
      case Linearizable::kBudgetExhausted:
        if (unchecked != nullptr) unchecked->push_back(key);
        break;
    }
  }
  return out;
}

}  // namespace leasehold::torture
