// torture/run_summary.cc: see run_summary.h.
#include "torture/run_summary.h"

#include <chrono>
#include <ctime>

#include <nlohmann/json.hpp>

namespace leasehold::torture {
namespace {

using nlohmann::json;

Status bad(const std::string& why) { return {ErrorCode::kInvalidArgument, "summary line: " + why}; }

template <typename T>
Status get(const json& j, const char* name, T& out) {
  const auto it = j.find(name);
  if (it == j.end()) return bad(std::string("no \"") + name + "\"");
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return bad(std::string("\"") + name + "\" is not a string");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return bad(std::string("\"") + name + "\" is not true or false");
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!it->is_number_unsigned()) return bad(std::string("\"") + name + "\" is not a whole number >= 0");
  } else {
    if (!it->is_number_integer()) return bad(std::string("\"") + name + "\" is not a whole number");
  }
  out = it->get<T>();
  return {};
}

Status get_counts(const json& j, const char* name, std::map<std::string, int>& out) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_object()) return bad(std::string("\"") + name + "\" is not an object");
  for (const auto& [k, v] : it->items()) {
    if (!v.is_number_unsigned()) return bad(std::string("\"") + name + "\"." + k + " is not a whole number >= 0");
    out[k] = v.get<int>();
  }
  return {};
}

}  // namespace

int RunSummary::violation_count() const {
  int n = 0;
  for (const auto& [check, k] : violations) n += k;
  return n;
}

RunSummary summarize(const std::string& mode, const RunResult& run, double seconds, const std::string& commit,
                     const std::string& date) {
  RunSummary s;
  s.mode = mode;
  s.clock = run.clock;
  s.seed = run.seed;
  s.ops = run.ops;
  s.ms = static_cast<std::int64_t>(seconds * 1000);
  for (const Violation& v : run.violations) ++s.violations[v.check];
  s.faults = run.faults;
  s.unchecked_keys = static_cast<int>(run.unchecked.size());
  s.stopped_early = run.stopped_early;
  s.no_primary = run.no_primary;
  s.commit = commit;
  s.date = date;
  return s;
}

RunSummary unchecked_run(const std::string& mode, std::uint64_t seed, const std::string& why,
                         const std::string& commit, const std::string& date) {
  RunSummary s;
  s.checked = false;
  s.mode = mode;
  s.seed = seed;
  s.why = why;
  s.commit = commit;
  s.date = date;
  return s;
}

std::string summary_line(const RunSummary& r) {
  json j = {{"checked", r.checked}, {"mode", r.mode}, {"seed", r.seed}, {"commit", r.commit}, {"date", r.date}};
  if (!r.checked) {
    j["why"] = r.why;
    return j.dump();
  }
  j["clock"] = r.clock;
  j["operations"] = r.ops;
  j["ms"] = r.ms;
  j["violations"] = r.violations;
  j["faults"] = r.faults;
  j["unchecked_keys"] = r.unchecked_keys;
  j["stopped_early"] = r.stopped_early;
  j["no_primary"] = r.no_primary;
  return j.dump();
}

Result<RunSummary> parse_summary_line(std::string_view line) {
  const json j = json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object: " + std::string(line.substr(0, 120)));
  RunSummary r;
  Status st = get(j, "checked", r.checked);
  if (st) st = get(j, "mode", r.mode);
  if (st) st = get(j, "seed", r.seed);
  if (st) st = get(j, "commit", r.commit);
  if (st) st = get(j, "date", r.date);
  if (st && !r.checked) st = get(j, "why", r.why);
  if (st && r.checked) {
    st = get(j, "clock", r.clock);
    if (st) st = get(j, "operations", r.ops);
    if (st) st = get(j, "ms", r.ms);
    if (st) st = get_counts(j, "violations", r.violations);
    if (st) st = get_counts(j, "faults", r.faults);
    if (st) st = get(j, "unchecked_keys", r.unchecked_keys);
    if (st) st = get(j, "stopped_early", r.stopped_early);
    if (st) st = get(j, "no_primary", r.no_primary);
  }
  if (!st) return st;
  if (r.mode.empty()) return bad("empty \"mode\"");
  return r;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace leasehold::torture
