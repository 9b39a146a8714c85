// torture/history_check.cc: see history_check.h.
#include "torture/history_check.h"

#include <algorithm>
#include <filesystem>

namespace leasehold::torture {
namespace {

std::size_t count_ops(const std::vector<Op>& history) {
  return static_cast<std::size_t>(std::count_if(history.begin(), history.end(), [](const Op& op) {
    return op.op == "acquire" || op.op == "release" || op.op == "fput" || op.op == "fget" || op.op == "cset" ||
           op.op == "cdel" || op.op == "reg";
  }));
}

}  // namespace

Result<CheckedHistory> check_history_files(const std::vector<std::string>& files, const CheckOptions& options) {
  CheckedHistory checked;
  std::vector<std::string> unparsable;
  for (const std::string& f : files) {
    if (!std::filesystem::exists(f)) continue;
    auto part = read_history(f, &unparsable);
    if (!part) return part.status();
    checked.history.insert(checked.history.end(), part->begin(), part->end());
  }
  checked.ops = count_ops(checked.history);
  for (std::string& where : unparsable) {
    checked.violations.push_back({kUnparsableHistory, "a history line did not parse (an operation may be missing "
                                                      "from what was checked): " + std::move(where)});
  }
  std::vector<Violation> found = check_all(checked.history, options, &checked.unchecked);
  checked.violations.insert(checked.violations.end(), found.begin(), found.end());
  return checked;
}

const std::vector<std::string>& known_checks() {
  static const std::vector<std::string> checks = {"fencing",  "token-order",     "mutual-exclusion", "durability",
                                                  "liveness", "linearizability", kUnparsableHistory};
  return checks;
}

}  // namespace leasehold::torture
