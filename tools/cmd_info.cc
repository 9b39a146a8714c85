// `leasehold info NAME [--json]`: one lock's mode, holders, waiters, last
// token and lock-delay. Exit 1 when the server keeps no state for NAME.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/cli_json.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct InfoArgs {
  cli::CommonOptions common;
  std::string name;
};

int run_info(const InfoArgs& a) {
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("info", client.status());
  auto info = (*client)->lock_info(a.name);
  if (!info) return cli::report("info", info.status());
  if (!*info) {
    if (a.common.json) std::cout << "null\n";
    return cli::report("info", Status(ErrorCode::kNotFound,
                                      "lock '" + a.name + "' is not held and has no waiters"));
  }
  const client::LockInfo& lock = **info;
  if (a.common.json) {
    std::cout << cli::dump(cli::lock_json(lock)) << "\n";
    return cli::kExitOk;
  }
  std::cout << "lock:       " << lock.name << "\n"
            << "mode:       " << client::lock_mode_name(lock.mode);
  if (lock.mode == client::LockMode::kSemaphore) std::cout << " (limit " << lock.limit << ")";
  std::cout << "\nlast_token: " << lock.last_token << "\n";
  if (lock.delay_remaining.count() > 0) {
    std::cout << "lock-delay: " << cli::human_duration(lock.delay_remaining) << " remaining\n";
  }
  std::cout << "holders:    " << lock.holders.size() << "\n";
  for (const auto& h : lock.holders) {
    std::cout << fmt::format("  session {} token {} held {} owner {}\n", h.session, h.token,
                             cli::human_duration(h.held), h.owner.empty() ? "-" : h.owner);
  }
  std::cout << "waiters:    " << lock.waiters.size() << "\n";
  for (const auto& w : lock.waiters) {
    std::cout << fmt::format("  session {} {} waited {} owner {}\n", w.session,
                             client::lock_mode_name(w.mode), cli::human_duration(w.waited),
                             w.owner.empty() ? "-" : w.owner);
  }
  return cli::kExitOk;
}

void register_info(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  auto* cmd = app.add_subcommand("info", "Show one lock: holders, tokens, waiters");
  cmd->add_option("name", args->name, "Lock name")->required();
  cli::add_common_options(*cmd, args->common, true);
  cmd->callback([args] {
    cli::run_command("info", [&] { return run_info(*args); }, &set_exit_code);
  });
}

const bool info_registered = add_subcommand("info", &register_info);

}  // namespace
}  // namespace leasehold::tools
