// `leasehold locks [PREFIX] [--count N] [--json]`: a table of the locks that
// have holders or waiters: name, mode, holders, tokens, queue depth, held-for.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct LocksArgs {
  cli::CommonOptions common;
  std::string prefix;
  std::size_t count = 1000;
};

int run_locks(const LocksArgs& a) {
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("locks", client.status());
  auto locks = (*client)->list_locks(a.prefix, a.count);
  if (!locks) return cli::report("locks", locks.status());
  if (a.common.json) {
    std::string out = "[";
    for (std::size_t i = 0; i < locks->size(); ++i) {
      out += (i ? "," : "") + cli::lock_json((*locks)[i]);
    }
    std::cout << out << "]\n";
    return cli::kExitOk;
  }
  std::cout << fmt::format("{:<32} {:<10} {:>7} {:<20} {:>5} {:>9}\n", "NAME", "MODE", "HOLDERS",
                           "TOKENS", "QUEUE", "HELD-FOR");
  for (const auto& lock : *locks) {
    std::string holders = std::to_string(lock.holders.size());
    if (lock.mode == client::LockMode::kSemaphore) holders += "/" + std::to_string(lock.limit);
    std::string tokens;
    client::Millis held{0};
    for (const auto& h : lock.holders) {
      tokens += (tokens.empty() ? "" : ",") + std::to_string(h.token);
      held = std::max(held, h.held);
    }
    if (tokens.empty()) tokens = "-";
    std::cout << fmt::format("{:<32} {:<10} {:>7} {:<20} {:>5} {:>9}\n", lock.name,
                             client::lock_mode_name(lock.mode), holders, tokens,
                             lock.waiters.size(),
                             lock.holders.empty() ? "-" : cli::human_duration(held));
  }
  return cli::kExitOk;
}

void register_locks(CLI::App& app) {
  auto args = std::make_shared<LocksArgs>();
  auto* cmd = app.add_subcommand("locks", "List locks with holders or waiters");
  cmd->add_option("prefix", args->prefix, "Only locks whose name starts with this");
  cmd->add_option("--count", args->count, "At most this many locks")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000}))
      ->capture_default_str();
  cli::add_common_options(*cmd, args->common, true);
  cmd->callback([args] {
    cli::run_command("locks", [&] { return run_locks(*args); }, &set_exit_code);
  });
}

const bool registered = add_subcommand(&register_locks);

}  // namespace
}  // namespace leasehold::tools
