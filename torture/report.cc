// torture/report.cc: see report.h.
#include "torture/report.h"

#include <cstdlib>
#include <sstream>

namespace leasehold::torture {

void Totals::add(const std::string& mode, const RunResult& run) {
  ++runs;
  ops += run.ops;
  ++runs_by_mode[mode];
  ++runs_by_clock[run.clock];
  for (const auto& [kind, n] : run.faults) {
    faults[kind] += n;
    faults_by_mode[mode][kind] += n;
  }
  violations_by_mode[mode] += static_cast<int>(run.violations.size());
  for (const Violation& v : run.violations) ++violations_by_check[v.check];
  if (!run.violations.empty()) {
    failures.push_back("seed " + std::to_string(run.seed) + " (" + mode + ", clock " + run.clock +
                       "): " + run.violations.front().check + ": " + run.violations.front().message +
                       (run.history_path.empty() ? "" : "; history " + run.history_path));
  }
  unchecked_keys += static_cast<int>(run.unchecked.size());
}

std::string summary_line(const std::string& mode, const RunResult& run, double seconds) {
  Op op;
  op.op = "run";
  op.key = mode;
  op.value = run.clock;
  op.token = run.seed;
  op.limit = static_cast<std::int64_t>(run.ops);
  op.inv = static_cast<std::int64_t>(seconds * 1000);
  op.session = run.violations.size();
  for (const Violation& v : run.violations) op.mode += (op.mode.empty() ? "" : ",") + v.check;
  for (const auto& [kind, n] : run.faults) op.aux += (op.aux.empty() ? "" : ",") + kind + "=" + std::to_string(n);
  op.cmp = static_cast<std::int64_t>(run.unchecked.size());
  return to_json(op);
}

std::string start_error_line(const std::string& mode, std::uint64_t seed, const std::string& why) {
  Op op;
  op.op = "run-error";
  op.key = mode;
  op.token = seed;
  op.aux = why;
  return to_json(op);
}

Status add_summary_line(Totals& t, std::string_view line) {
  auto parsed = from_json(line);
  if (parsed && parsed->op == "run-error") {
    ++t.start_errors;
    t.failures.push_back("seed " + std::to_string(parsed->token) + " (" + parsed->key +
                         "): could not run to the end: " + parsed->aux);
    return {};
  }
  if (!parsed || parsed->op != "run") return {ErrorCode::kInvalidArgument, "not a summary line"};
  const Op& op = parsed.value();
  const std::string& mode = op.key;
  ++t.runs;
  t.ops += static_cast<std::uint64_t>(op.limit);
  t.seconds += static_cast<double>(op.inv) / 1000.0;
  ++t.runs_by_mode[mode];
  ++t.runs_by_clock[op.value];
  std::size_t start = 0;
  while (start < op.aux.size()) {
    std::size_t end = op.aux.find(',', start);
    if (end == std::string::npos) end = op.aux.size();
    const std::string item = op.aux.substr(start, end - start);
    const auto eq = item.find('=');
    if (eq != std::string::npos) {
      const int n = std::atoi(item.c_str() + eq + 1);
      t.faults[item.substr(0, eq)] += n;
      t.faults_by_mode[mode][item.substr(0, eq)] += n;
    }
    start = end + 1;
  }
  t.violations_by_mode[mode] += static_cast<int>(op.session);
  start = 0;
  while (start < op.mode.size()) {
    std::size_t end = op.mode.find(',', start);
    if (end == std::string::npos) end = op.mode.size();
    ++t.violations_by_check[op.mode.substr(start, end - start)];
    start = end + 1;
  }
  if (op.session > 0) {
    t.failures.push_back("seed " + std::to_string(op.token) + " (" + mode + ", clock " + op.value + "): " + op.mode);
  }
  t.unchecked_keys += static_cast<int>(op.cmp);
  return {};
}

const std::vector<std::string>& known_fault_kinds() {
  static const std::vector<std::string> kinds = {
      "kill",          "kill-standby",        "pause-server",           "pause-client",
      "clock-wall",    "kill-etcd",           "kill-etcd-majority",     "pause-etcd",
      "kill-lose-log", "power-cut",           "disk-eio",               "disk-full",
      "partition",     "one-way-loss",        "slow-link",              "none",
      "partition-node-etcd", "one-way-loss-node-etcd", "slow-link-node-etcd", "partition-etcd",
      "disk-eio-etcd", "disk-full-etcd", "power-cut-etcd", "one-way-etcd"};
  return kinds;
}

namespace {

// The nemesis counts some kinds under a per-mode name (kill is kill-primary
// in cluster modes, pause-server is pause-primary) and failed injections as
// "<kind>:error"; this maps a counted name back to the `--faults` kind.
std::string requested_kind(const std::string& counted) {
  std::string kind = counted.substr(0, counted.find(':'));
  if (kind == "kill-primary") return "kill";
  if (kind == "pause-primary") return "pause-server";
  return kind;
}

void render_fault_table(std::ostringstream& out, const Totals& t) {
  out << "\n## Faults injected, by kind and mode\n\n"
      << "`<kind>:error` counts faults whose inject or heal failed; `(combined)` counts two faults held at once.\n\n"
      << "| fault | total |";
  for (const std::string& mode : run_modes()) out << " " << mode << " |";
  out << "\n|---|---:|";
  for (std::size_t i = 0; i < run_modes().size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& [kind, n] : t.faults) {
    out << "| " << kind << " | " << n << " |";
    for (const std::string& mode : run_modes()) {
      const auto m = t.faults_by_mode.find(mode);
      const int k = m == t.faults_by_mode.end() || m->second.count(kind) == 0 ? 0 : m->second.at(kind);
      out << " " << k << " |";
    }
    out << "\n";
  }
  std::vector<std::string> never;
  for (const std::string& kind : known_fault_kinds()) {
    if (kind == "none") continue;
    bool seen = false;
    for (const auto& [counted, n] : t.faults) seen = seen || (n > 0 && requested_kind(counted) == kind);
    if (!seen) never.push_back(kind);
  }
  if (!never.empty()) {
    out << "\nFault kinds never injected in these runs:";
    for (const auto& kind : never) out << " `" << kind << "`";
    out << ".\n";
  }
}

}  // namespace

std::string render_markdown(const Totals& t, const std::string& command, const std::string& notes) {
  std::ostringstream out;
  out << "# Reliability: the torture suite's results\n\n"
      << "Written by `" << command << "` (see [torture.md](torture.md) for what each\n"
      << "fault and check means). Do not edit by hand: rerun `make torture RUNS=N`.\n\n";
  out << "| runs | operations | wall time (s) | violations |\n|---:|---:|---:|---:|\n";
  int total_violations = 0;
  for (const auto& [mode, n] : t.violations_by_mode) total_violations += n;
  out << "| " << t.runs << " | " << t.ops << " | " << static_cast<long long>(t.seconds) << " | " << total_violations
      << " |\n\n";
  out << "## Runs by mode and clock\n\n| mode | runs | violations |\n|---|---:|---:|\n";
  for (const auto& [mode, n] : t.runs_by_mode) {
    const auto v = t.violations_by_mode.find(mode);
    out << "| " << mode << " | " << n << " | " << (v == t.violations_by_mode.end() ? 0 : v->second) << " |\n";
  }
  for (const std::string& absent : run_modes()) {
    if (t.runs_by_mode.count(absent) == 0) out << "| " << absent << " | 0 (not run yet) | - |\n";
  }
  out << "\n| clock mode | runs |\n|---|---:|\n";
  for (const auto& [clock, n] : t.runs_by_clock) out << "| " << clock << " | " << n << " |\n";
  render_fault_table(out, t);
  if (t.start_errors > 0) {
    out << "\n" << t.start_errors
        << " runs could not run to the end (a process did not start, or a cluster had no primary in\n"
           "time at the final crash; listed below; their operations are not counted above).\n";
  }
  out << "\n## Violations by check\n\n";
  if (t.violations_by_check.empty()) {
    out << "None.\n";
  } else {
    out << "| check | violations |\n|---|---:|\n";
    for (const auto& [check, n] : t.violations_by_check) out << "| " << check << " | " << n << " |\n";
  }
  if (!t.failures.empty()) {
    out << "\nFailing seeds (rerun with `build/torture/leasehold-torture run --seed N ...`):\n\n";
    for (const auto& f : t.failures) out << "- " << f << "\n";
  }
  out << "\nA server clock outside the drift bound is run on purpose by the ctest\n"
         "`torture_embedded_clock_out_of_bound` (rate 1.5x), and the unsafe server switches by\n"
         "`torture_switch_<name>`: each must be caught (docs/torture.md); those runs are not in\n"
         "these tables. What the suite does not cover is listed in docs/torture.md, \"Limits\".\n";
  if (t.unchecked_keys > 0) {
    out << "\n" << t.unchecked_keys << " key histories exceeded the linearizability search budget (not checked).\n";
  }
  if (!notes.empty()) out << "\n## Notes\n\n" << notes << (notes.back() == '\n' ? "" : "\n");
  return out.str();
}

}  // namespace leasehold::torture
