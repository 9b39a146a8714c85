// `leasehold revoke NAME`: takes the lock from its holders (they get a `lost`
// push; `leasehold lock` stops its command). Exit 1 when NAME is not held.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct RevokeArgs {
  cli::CommonOptions common;
  std::string name;
};

int run_revoke(const RevokeArgs& a) {
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("revoke", client.status());
  Status st = (*client)->revoke(a.name);
  if (st.code() == ErrorCode::kNotFound) {
    return cli::report("revoke", Status(ErrorCode::kNotFound, "lock '" + a.name + "' is not held"));
  }
  if (!st) return cli::report("revoke", st);
  std::cout << "revoked lock '" << a.name << "'\n";
  return cli::kExitOk;
}

void register_revoke(CLI::App& app) {
  auto args = std::make_shared<RevokeArgs>();
  auto* cmd = app.add_subcommand("revoke", "Revoke a lock from its holders (operator)");
  cmd->add_option("name", args->name, "Lock name")->required();
  cli::add_common_options(*cmd, args->common, false);
  cmd->callback([args] {
    cli::run_command("revoke", [&] { return run_revoke(*args); }, &set_exit_code);
  });
}

const bool revoke_registered = add_subcommand("revoke", &register_revoke);

}  // namespace
}  // namespace leasehold::tools
