#include "tools/subcommands.h"

#include <CLI/CLI.hpp>

#include "tools/registry.h"

namespace leasehold::tools {
namespace {
int g_exit_code = 0;
}  // namespace

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void register_all(CLI::App& app) {
  for (const auto& add : registered_subcommands()) add(app);
}

}  // namespace leasehold::tools

namespace leasehold::tools {
std::vector<SubcommandRegistrar>& registered_subcommands() {
  static std::vector<SubcommandRegistrar> list;
  return list;
}
}  // namespace leasehold::tools
