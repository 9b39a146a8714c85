// torture/report.h: the totals of many torture runs and their markdown
// form (docs/RELIABILITY.md).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <string>
#include <vector>

#include "torture/run.h"

namespace leasehold::torture {

struct Totals {
  int runs = 0;
  std::uint64_t ops = 0;
  double seconds = 0;                           // wall time of all runs
  std::map<std::string, int> runs_by_mode;      // embedded, ...
  std::map<std::string, int> runs_by_clock;     // none, wall, rate:1.005 ...
  std::map<std::string, int> faults;            // by kind
  std::map<std::string, std::map<std::string, int>> faults_by_mode;  // mode -> kind -> injected
  std::map<std::string, int> violations_by_mode;
  std::map<std::string, int> violations_by_check;
  std::vector<std::string> failures;            // "seed N (mode): first violation; history path"
  int unchecked_keys = 0;
  int start_errors = 0;                         // runs that could not run to the end
  void add(const std::string& mode, const RunResult& run);
};

// One run as one summary line, appended to a file (`run --summary FILE`)
// so that runs of several invocations, also parallel ones, make one report
// (`leasehold-torture report FILE...`). It is a history record (history.h)
// with op "run": key = mode, value = clock, token = seed, limit = client
// operations, inv = the run's wall time in ms, session = violations,
// mode = the violated checks (comma-separated), aux = the faults
// ("kind=n,..."), cmp = unchecked keys.
std::string summary_line(const std::string& mode, const RunResult& run, double seconds);
// A run that could not run to the end (op "run-error", aux = why).
std::string start_error_line(const std::string& mode, std::uint64_t seed, const std::string& why);
// Adds one summary line; kInvalidArgument when it is not one.
Status add_summary_line(Totals& totals, std::string_view line);

// Every fault kind `run --faults` accepts, in the order the docs list them.
const std::vector<std::string>& known_fault_kinds();

// The report: what ran, the tables (faults by kind and mode; the kinds
// never injected are named), the failing seeds. `command` is the command
// line that produced it; `notes` (markdown, may be empty) is appended
// verbatim under "Notes" (e.g. batches run before per-run records were kept).
std::string render_markdown(const Totals& totals, const std::string& command, const std::string& notes = "");

}  // namespace leasehold::torture
