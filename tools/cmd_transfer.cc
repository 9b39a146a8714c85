// `leasehold transfer NAME --to SESSION [--from SESSION --token T]`: moves a
// held lock to another live session (LOCK.TRANSFER). Without --from/--token
// the holder is looked up with LOCK.INFO, which works when the lock has one
// holder whose session this user may see (its own, or any for an admin).
// Prints the new token. Exit 1 when the server refuses (stale token, not
// held, target not live or already holding/waiting); 64 for bad arguments,
// several holders without --from/--token, and NOPERM.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct TransferArgs {
  cli::CommonOptions common;
  std::string name;
  std::uint64_t to = 0;
  std::uint64_t from = 0;   // 0: look up
  std::uint64_t token = 0;  // 0: look up
};

int run_transfer(TransferArgs& a) {
  if ((a.from == 0) != (a.token == 0)) {
    return cli::report("transfer", Status(ErrorCode::kInvalidArgument,
                                          "give both --from and --token, or neither (to look the holder up)"));
  }
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("transfer", client.status());
  if (a.from == 0) {
    auto info = (*client)->lock_info(a.name);
    if (!info) return cli::report("transfer", info.status());
    if (!*info || (*info)->holders.empty()) {
      return cli::report("transfer", Status(ErrorCode::kNotFound, "lock '" + a.name + "' is not held"));
    }
    if ((*info)->holders.size() != 1) {
      return cli::report("transfer", Status(ErrorCode::kInvalidArgument,
                                            "lock '" + a.name + "' has " + std::to_string((*info)->holders.size()) +
                                                " holders: say which with --from SESSION --token T"));
    }
    const client::Holder& h = (*info)->holders.front();
    if (h.session == 0) {
      return cli::report("transfer", Status(ErrorCode::kInvalidArgument,
                                            "the holder of lock '" + a.name +
                                                "' is another user's session (only an admin may move it)"));
    }
    a.from = h.session;
    a.token = h.token;
  }
  auto token = (*client)->transfer(a.name, a.from, a.token, a.to);
  if (!token) return cli::report("transfer", token.status());
  std::cout << "lock '" << a.name << "' moved from session " << a.from << " (token " << a.token
            << ") to session " << a.to << ", token " << *token << "\n";
  return cli::kExitOk;
}

void register_transfer(CLI::App& app) {
  auto args = std::make_shared<TransferArgs>();
  auto* cmd = app.add_subcommand("transfer", "Move a held lock to another live session (new, higher token)");
  cmd->add_option("name", args->name, "Lock name")->required();
  cmd->add_option("--to", args->to, "The session that gets the lock")->required()->check(cli::whole_number(1, UINT64_MAX));
  cmd->add_option("--from", args->from, "The holding session (default: the lock's one holder, from LOCK.INFO)")
      ->check(cli::whole_number(1, UINT64_MAX));
  cmd->add_option("--token", args->token, "The holder's token (with --from)")->check(cli::whole_number(1, UINT64_MAX));
  cli::add_common_options(*cmd, args->common, false);
  cmd->callback([args] {
    cli::run_command("transfer", [&] { return run_transfer(*args); }, &set_exit_code);
  });
}

const bool transfer_registered = add_subcommand("transfer", &register_transfer);

}  // namespace
}  // namespace leasehold::tools
