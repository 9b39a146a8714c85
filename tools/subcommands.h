// tools/subcommands.h: how the `leasehold` binary's subcommands plug in.
//
// Each subcommand lives in its own file (cmd_<name>.cc) with a
// register_<name>(CLI::App&) function that adds the subcommand and its
// callback. A callback stores its process exit code with set_exit_code().
// Errors are printed as one line on stderr, never a stack trace.
#pragma once

namespace CLI {
class App;
}

namespace leasehold::tools {

void register_all(CLI::App& app);
void set_exit_code(int code);
int exit_code();

}  // namespace leasehold::tools
