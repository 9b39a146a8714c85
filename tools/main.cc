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
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // Usage errors: one line on stderr, exit 64 (EX_USAGE), like every
    // other usage error of the leasehold subcommands.
    std::cerr << "leasehold: " << e.what() << " (see --help)\n";
    return 64;
  }
  return leasehold::tools::exit_code();
}
