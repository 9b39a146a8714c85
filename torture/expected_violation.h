// torture/expected_violation.h: what `run --expect-violation CHECK[,CHECK...]
// [--allow-violation CHECK[,CHECK...]]` demands of the runs against a
// deliberately broken server (an unsafe test switch, an out-of-bound
// clock): the planted bug must be caught by the check it breaks, not by
// whichever check fires first.
//
// The runs meet the expectation when they found at least one violation of
// an expected check and every violation is of an expected or an allowed
// check. A violation of any other check (or none of an expected one) fails
// them: a run that trips the wrong check has found something else, or the
// harness itself is broken. "Allowed" is for what the fault or the bug
// also breaks as a consequence (a power cut that loses acknowledged data
// shows in durability and then in linearizability); with no expected check
// (a control run against an honest server under a fault that destroys
// data itself) the runs pass when every violation is allowed.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

// Parses "CHECK[,CHECK...]". kInvalidArgument for an empty list or a name
// that is not a check (history_check.h, known_checks()), naming it.
Result<std::vector<std::string>> parse_expected_checks(const std::string& text);

// "" when `violations_by_check` (check -> violations) meets `expected`
// (and `allowed`); otherwise why not, e.g. "no violation of fencing" or
// "a violation of durability, not of the expected fencing".
std::string unmet_expectation(const std::vector<std::string>& expected, const std::vector<std::string>& allowed,
                              const std::map<std::string, int>& violations_by_check);

}  // namespace leasehold::torture
