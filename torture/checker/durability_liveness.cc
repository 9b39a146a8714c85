// torture/checker/durability_liveness.cc: checks (d) and (e), see checker.h.
#include <algorithm>
#include <map>
#include <tuple>

#include "torture/checker/checker.h"

namespace leasehold::torture {

std::vector<Violation> check_durability(const std::vector<Op>& history) {
  std::vector<Violation> out;
  for (const Op& crash : history) {
    if (crash.op != "crash") continue;
    std::uint64_t before = 0;  // highest token acknowledged before the kill
    for (const Op& g : history) {
      if ((g.op == "acquire" || g.op == "cset") && g.out == Outcome::kOk && g.cmp < crash.inv) {
        before = std::max(before, g.token);
      }
    }
    for (const Op& g : history) {
      if ((g.op == "acquire" || g.op == "cset") && g.out == Outcome::kOk && g.inv > crash.cmp && g.token <= before) {
        out.push_back({"durability", "after the crash at " + std::to_string(crash.inv) + " ns, " + g.key +
                                         " was granted token " + std::to_string(g.token) +
                                         ", not above token " + std::to_string(before) + " acknowledged before it"});
      }
    }
  }
  // Acknowledged releases survive: a worker acquires only while it holds
  // nothing on its session, so "-CONFLICT already holding" means the server
  // still counts a hold that was released (and acknowledged), or granted a
  // hold the worker never learnt of.
  for (const Op& acq : history) {
    const bool already = acq.aux.find("already holds") != std::string::npos ||
                         acq.aux.find("already waits") != std::string::npos;
    if (acq.op == "acquire" && acq.process >= 0 && acq.out == Outcome::kFail && already) {
      out.push_back({"durability", "process " + std::to_string(acq.process) + " session " +
                                       std::to_string(acq.session) + " was refused " + acq.key + " at " +
                                       std::to_string(acq.inv) + " ns as already holding it: " + acq.aux});
    }
  }
  // Acknowledged grants survive: a release sent while the holder's session
  // was still live by its safe deadline (its hold record ends at the release,
  // not at the deadline) must not be refused as not holding: the server
  // would have lost the grant, or forgotten a SEQ-retried release it did.
  std::map<std::tuple<int, std::string, std::uint64_t>, const Op*> holds;
  for (const Op& h : history) {
    if (h.op == "hold") holds[{h.process, h.key, h.token}] = &h;
  }
  for (const Op& rel : history) {
    if (rel.op != "release" || rel.out != Outcome::kFail) continue;
    const bool refused = rel.aux.find("not_holder") != std::string::npos ||
                         rel.aux.find("stale_token") != std::string::npos;
    const auto it = holds.find({rel.process, rel.key, rel.token});
    if (refused && it != holds.end() && it->second->cmp >= rel.inv) {
      out.push_back({"durability", "process " + std::to_string(rel.process) + " released " + rel.key + " token " +
                                       std::to_string(rel.token) + " while its session was live, and was refused: " +
                                       rel.aux});
    }
  }
  // Acknowledged fenced writes survive: a get sent after a put was
  // acknowledged shows that put's token or a later one.
  std::map<std::string, std::vector<const Op*>> puts;
  for (const Op& op : history) {
    if (op.op == "fput" && op.out == Outcome::kOk) puts[op.key].push_back(&op);
  }
  for (const Op& get : history) {
    if (get.op != "fget" || get.out != Outcome::kOk) continue;
    for (const Op* put : puts[get.key]) {
      if (put->cmp < get.inv && get.token < put->token) {
        out.push_back({"durability", "FENCE.GET " + get.key + " at " + std::to_string(get.inv) + " ns shows token " +
                                         std::to_string(get.token) + " after token " + std::to_string(put->token) +
                                         " was acknowledged"});
        break;
      }
    }
  }
  return out;
}

std::vector<Violation> check_liveness(const std::vector<Op>& history) {
  std::vector<Violation> out;
  for (const Op& op : history) {
    if (op.op == "liveness" && op.out != Outcome::kOk) {
      out.push_back({"liveness", "after the faults healed, " + op.key + " was not granted within " +
                                     std::to_string((op.cmp - op.inv) / 1'000'000) + " ms: " + op.aux});
    }
  }
  return out;
}

std::vector<Violation> check_all(const std::vector<Op>& history, const CheckOptions& options,
                                 std::vector<std::string>* unchecked) {
  std::vector<Violation> all;
  auto add = [&](std::vector<Violation> v) { all.insert(all.end(), v.begin(), v.end()); };
  add(check_fencing(history));
  add(check_token_order(history));
  add(check_mutual_exclusion(history, options));
  add(check_durability(history));
  add(check_liveness(history));
  add(check_linearizable(history, options, unchecked));
  return all;
}

}  // namespace leasehold::torture
