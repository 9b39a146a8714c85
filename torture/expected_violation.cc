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
                    "not a check: '" + name + "' (the checks: " + joined(known) + ")");
    }
    checks.push_back(name);
    start = end + 1;
  }
  return checks;
}

std::string unmet_expectation(const std::vector<std::string>& expected, const std::vector<std::string>& allowed,
                              const std::map<std::string, int>& violations_by_check) {
  auto in = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::vector<std::string> others;
  int named = 0;
  for (const auto& [check, n] : violations_by_check) {
    if (n <= 0) continue;
    if (in(expected, check)) {
      named += n;
    } else if (!in(allowed, check)) {
      others.push_back(check);
    }
  }
  std::vector<std::string> accepted = expected;
  accepted.insert(accepted.end(), allowed.begin(), allowed.end());
  if (!others.empty()) {
    return "a violation of " + joined(others) + ", not of the expected " +
           (accepted.empty() ? std::string("(none)") : joined(accepted));
  }
  if (named == 0 && !expected.empty()) return "no violation of " + joined(expected);
  return "";
}

}  // namespace leasehold::torture
