// torture/history_check.h: how a run's history is checked, whether the run
// went to the end or stopped early (a worker exited, no primary after the
// final crash), and how `leasehold-torture check` re-checks a kept one.
//
// check_history_files() reads the history files of one run (the harness's,
// each worker's, the fenced register's; a file that does not exist is
// skipped: a worker that never started wrote none), merges them in the
// order given and runs every check of checker.h. A line that does not parse
// is not skipped silently: each one is a violation of the check
// "unparsable-history" naming the file and line, and the rest is checked.
// Errors: kIoError when an existing file cannot be read.
// Thread-safety: a pure function of the files.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "torture/checker/checker.h"

namespace leasehold::torture {

// The check name of a history line that did not parse.
inline constexpr const char* kUnparsableHistory = "unparsable-history";

struct CheckedHistory {
  std::size_t ops = 0;  // client operations (acquire, release, fput, fget, cset, cdel, reg)
  std::vector<Violation> violations;
  std::vector<std::string> unchecked;  // keys past the linearizability budget
  std::vector<Op> history;             // the merged records
};

Result<CheckedHistory> check_history_files(const std::vector<std::string>& files, const CheckOptions& options = {});

// The check names a violation can carry: checker.h's and kUnparsableHistory.
const std::vector<std::string>& known_checks();

}  // namespace leasehold::torture
