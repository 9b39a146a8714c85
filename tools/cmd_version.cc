// `leasehold version`: prints the version.
#include <CLI/CLI.hpp>

#include <iostream>

#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

void register_version(CLI::App& app) {
  auto* cmd = app.add_subcommand("version", "Print the leasehold version");
  cmd->callback([] {
    std::cout << "leasehold 0.1.0\n";
    set_exit_code(0);
  });
}

const bool version_registered = add_subcommand("version", &register_version);

}  // namespace
}  // namespace leasehold::tools
