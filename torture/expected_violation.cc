// torture/expected_violation.cc: see expected_violation.h.
#include "torture/expected_violation.h"

#include <algorithm>

#include "torture/history_check.h"

namespace leasehold::torture {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

Result<std::vector<std::string>> parse_expected_checks(const std::string& text) {
  std::vector<std::string> checks;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string name = text.substr(start, end - start);
    const auto& known = known_checks();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Status(ErrorCode::kInvalidArgument,
                    "--expect-violation wants the check(s) the planted bug must trip, one of " + joined(known) +
                        "; got '" + name + "'");
    }
    checks.push_back(name);
    start = end + 1;
  }
  return checks;
}

std::string unmet_expectation(const std::vector<std::string>& expected,
                              const std::map<std::string, int>& violations_by_check) {
  std::vector<std::string> others;
  int named = 0;
  for (const auto& [check, n] : violations_by_check) {
    if (n <= 0) continue;
    if (std::find(expected.begin(), expected.end(), check) == expected.end()) {
      others.push_back(check);
    } else {
      named += n;
    }
  }
  if (!others.empty()) return "a violation of " + joined(others) + ", not of the expected " + joined(expected);
  if (named == 0) return "no violation (expected " + joined(expected) + ")";
  return "";
}

}  // namespace leasehold::torture
