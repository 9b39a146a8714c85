// torture/expected_violation.h: what `run --expect-violation CHECK[,CHECK...]`
// demands of the runs against a deliberately broken server (an unsafe test
// switch, an out-of-bound clock): the planted bug must be caught by the
// check(s) it breaks, not by whichever check fires first.
//
// The runs meet the expectation when they found at least one violation and
// every violation is of a named check. A violation of any other check (or
// none at all) fails them: a run that trips the wrong check has found
// something else, or the harness itself is broken.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::torture {

// Parses "CHECK[,CHECK...]". kInvalidArgument for an empty list or a name
// that is not a check (history_check.h, known_checks()).
Result<std::vector<std::string>> parse_expected_checks(const std::string& text);

// "" when `violations_by_check` (check -> violations) meets `expected`;
// otherwise why not, e.g. "no violation (expected fencing)" or
// "a violation of durability, not of the expected fencing".
std::string unmet_expectation(const std::vector<std::string>& expected,
                              const std::map<std::string, int>& violations_by_check);

}  // namespace leasehold::torture
