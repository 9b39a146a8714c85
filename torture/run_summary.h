// torture/run_summary.h: one torture run as one JSON line, appended by
// `leasehold-torture run --summary FILE` (`make torture`: build/torture/
// runs.jsonl, never a tracked file) and folded into the record by
// `leasehold-torture report` (report.h).
//
// The line: {"checked":true, "mode", "clock", "seed", "operations", "ms"
// (the run's wall time), "violations" ({check: n}), "faults" ({counted
// name: n}), "unchecked_keys", "stopped_early" (why the run did not go to
// the end, "" if it did), "no_primary" (the final crash's recovery error,
// a liveness finding, "" if none), "commit", "date" (UTC, ISO 8601)}; a run
// whose history could not be checked at all (its server or cluster did not
// start) is {"checked":false, "mode", "seed", "why", "commit", "date"}.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "torture/run.h"

namespace leasehold::torture {

struct RunSummary {
  bool checked = true;
  std::string mode;
  std::string clock;
  std::uint64_t seed = 0;
  std::uint64_t ops = 0;
  std::int64_t ms = 0;
  std::map<std::string, int> violations;  // check -> violations
  std::map<std::string, int> faults;      // counted fault name -> injected
  int unchecked_keys = 0;
  std::string stopped_early;
  std::string no_primary;
  std::string why;  // checked == false: why nothing could be checked
  std::string commit;
  std::string date;

  int violation_count() const;
};

// The summary of a finished (possibly stopped-early) run.
RunSummary summarize(const std::string& mode, const RunResult& run, double seconds, const std::string& commit,
                     const std::string& date);
// The summary of a run that could not be checked at all.
RunSummary unchecked_run(const std::string& mode, std::uint64_t seed, const std::string& why,
                         const std::string& commit, const std::string& date);

// One line (without the newline).
std::string summary_line(const RunSummary& run);
// Reads a line written by summary_line. kInvalidArgument naming the member
// that is missing or of the wrong type.
Result<RunSummary> parse_summary_line(std::string_view line);

// Now as "YYYY-MM-DDTHH:MM:SSZ" (the wall clock: for display only).
std::string utc_now();

}  // namespace leasehold::torture
