// torture/report.cc: see report.h.
#include "torture/report.h"

#include <sstream>

namespace leasehold::torture {

void ModeTotals::add(const ModeTotals& o) {
  runs += o.runs;
  ops += o.ops;
  ms += o.ms;
  violations += o.violations;
  stopped_early += o.stopped_early;
  no_primary += o.no_primary;
  not_checked += o.not_checked;
}

void Totals::add(const RunSummary& run) {
  if (first.date.empty() || run.date < first.date) first = {run.commit, run.date};
  if (last.date.empty() || run.date >= last.date) last = {run.commit, run.date};
  ModeTotals& m = modes[run.mode];
  if (!run.checked) {
    ++m.not_checked;
    return;
  }
  const int violations = run.violation_count();
  ++m.runs;
  m.ops += run.ops;
  m.ms += run.ms;
  m.violations += violations;
  m.stopped_early += run.stopped_early.empty() ? 0 : 1;
  m.no_primary += run.no_primary.empty() ? 0 : 1;
  ++clocks[run.clock];
  for (const auto& [kind, n] : run.faults) {
    if (n <= 0) continue;
    FaultTotals& f = faults[kind];
    f.injected += n;
    f.by_mode[run.mode] += n;
    ++f.runs;
    f.ops += run.ops;
    f.violations += violations;
  }
  for (const auto& [check, n] : run.violations) checks[check] += n;
  unchecked_keys += run.unchecked_keys;
}

ModeTotals Totals::all() const {
  ModeTotals sum;
  for (const auto& [mode, m] : modes) sum.add(m);
  return sum;
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

std::string date_of(const RunStamp& s) { return s.date.substr(0, 10); }

void render_fault_table(std::ostringstream& out, const Totals& t) {
  out << "\n### Faults injected, by kind\n\n"
      << "`<kind>:error` counts faults whose inject or heal failed; `(combined)` counts two faults held at once.\n"
      << "Runs, operations and violations are those of the runs that injected the kind.\n\n"
      << "| fault | injected |";
  for (const std::string& mode : run_modes()) out << " " << mode << " |";
  out << " runs | operations | violations |\n|---|---:|";
  for (std::size_t i = 0; i < run_modes().size(); ++i) out << "---:|";
  out << "---:|---:|---:|\n";
  for (const auto& [kind, f] : t.faults) {
    out << "| " << kind << " | " << f.injected << " |";
    for (const std::string& mode : run_modes()) {
      const auto m = f.by_mode.find(mode);
      out << " " << (m == f.by_mode.end() ? 0 : m->second) << " |";
    }
    out << " " << f.runs << " | " << f.ops << " | " << f.violations << " |\n";
  }
  std::vector<std::string> never;
  for (const std::string& kind : known_fault_kinds()) {
    if (kind == "none") continue;
    bool seen = false;
    for (const auto& [counted, f] : t.faults) seen = seen || (f.injected > 0 && requested_kind(counted) == kind);
    if (!seen) never.push_back(kind);
  }
  if (!never.empty()) {
    out << "\nFault kinds never injected in these runs:";
    for (const auto& kind : never) out << " `" << kind << "`";
    out << ".\n";
  }
}

}  // namespace

std::string render_markdown(const Totals& t) {
  std::ostringstream out;
  const ModeTotals all = t.all();
  out << "## Torture runs\n\n";
  if (t.first.date.empty()) {
    out << "No runs counted yet.\n";
  } else {
    out << "Runs from " << date_of(t.first) << " (commit " << t.first.commit << ") to " << date_of(t.last)
        << " (commit " << t.last.commit << ").\n";
  }
  out << "\n| runs | operations | wall time (s) | violations | stopped early | no primary after the final crash | "
         "not checked |\n|---:|---:|---:|---:|---:|---:|---:|\n";
  out << "| " << all.runs << " | " << all.ops << " | " << all.ms / 1000 << " | " << all.violations << " | "
      << all.stopped_early << " | " << all.no_primary << " | " << all.not_checked << " |\n\n";
  out << "\"Stopped early\": the run did not go to the end (a worker exited, or no primary answered\n"
         "within the bound after the final crash); its history was checked up to where it stopped and\n"
         "its violations are counted. \"No primary after the final crash\" is a liveness finding of its own.\n"
         "\"Not checked\": the server or cluster did not start, or (in runs recorded before every history\n"
         "was checked) the run could not run to the end; such runs are not in the other columns.\n";
  out << "\n### Runs by mode and clock\n\n"
      << "| mode | runs | operations | violations | stopped early | no primary | not checked |\n"
      << "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const std::string& mode : run_modes()) {
    const auto it = t.modes.find(mode);
    if (it == t.modes.end()) {
      out << "| " << mode << " | 0 (not run yet) | - | - | - | - | - |\n";
      continue;
    }
    const ModeTotals& m = it->second;
    out << "| " << mode << " | " << m.runs << " | " << m.ops << " | " << m.violations << " | " << m.stopped_early
        << " | " << m.no_primary << " | " << m.not_checked << " |\n";
  }
  out << "\n| clock mode | runs |\n|---|---:|\n";
  for (const auto& [clock, n] : t.clocks) out << "| " << clock << " | " << n << " |\n";
  render_fault_table(out, t);
  out << "\n### Violations by check\n\n";
  if (t.checks.empty()) {
    out << "None.\n";
  } else {
    out << "| check | violations |\n|---|---:|\n";
    for (const auto& [check, n] : t.checks) out << "| " << check << " | " << n << " |\n";
  }
  if (t.unchecked_keys > 0) {
    out << "\n" << t.unchecked_keys << " key histories exceeded the linearizability search budget (not checked).\n";
  }
  return out.str();
}

}  // namespace leasehold::torture
