// The one `leasehold` binary: every subcommand registers itself here.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "tools/subcommands.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"leasehold: a distributed lock service with fencing tokens"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "leasehold 0.1.0");
  leasehold::tools::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return leasehold::tools::exit_code();
}
