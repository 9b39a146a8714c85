// The one `leasehold` binary: every subcommand registers itself here.
// Exit codes: common/exit_codes.h (a usage error is 64 for every subcommand).
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "common/exit_codes.h"
#include "tools/subcommands.h"
#include "tools/usage_errors.h"

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
    std::string message = leasehold::tools::explain_parse_error(app, e, argc, argv);
    if (message.empty()) message = e.what();
    std::cerr << "leasehold: " << message << " (see --help)\n";
    return leasehold::exit_code::kUsage;
  }
  return leasehold::tools::exit_code();
}
