#include "tools/subcommands.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string_view>

#include "tools/registry.h"

namespace leasehold::tools {
namespace {
int g_exit_code = 0;
}  // namespace

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void register_all(CLI::App& app) {
  auto list = registered_subcommands();
  std::sort(list.begin(), list.end(), [](const RegisteredSubcommand& a, const RegisteredSubcommand& b) {
    return std::string_view(a.name) < std::string_view(b.name);
  });
  for (const auto& sub : list) sub.add(app);
}

}  // namespace leasehold::tools

namespace leasehold::tools {
std::vector<RegisteredSubcommand>& registered_subcommands() {
  static std::vector<RegisteredSubcommand> list;
  return list;
}
}  // namespace leasehold::tools
