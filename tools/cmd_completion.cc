// `leasehold completion bash|zsh`: prints a shell completion script made
// from the subcommand and option definitions (tools/completion.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "common/exit_codes.h"
#include "tools/completion.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

void register_completion(CLI::App& app) {
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  cmd->require_subcommand(1);
  const CLI::App* root = &app;
  cmd->add_subcommand("bash", "bash: source <(leasehold completion bash)")->callback([root] {
    std::cout << bash_completion(*root);
    set_exit_code(exit_code::kOk);
  });
  cmd->add_subcommand("zsh", "zsh: source <(leasehold completion zsh) after compinit")->callback([root] {
    std::cout << zsh_completion(*root);
    set_exit_code(exit_code::kOk);
  });
}

const bool completion_registered = add_subcommand("completion", &register_completion);

}  // namespace
}  // namespace leasehold::tools
