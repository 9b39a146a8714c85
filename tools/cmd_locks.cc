// `leasehold locks [PREFIX] [--count N] [--older-than D] [--json]`: a table of
// the locks that have holders or waiters: name, mode, holders, tokens, queue
// depth, held-for. --older-than keeps the locks whose oldest hold is at least
// D old (long holds); it filters the first --count locks the server lists.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "client/cli_support.h"
#include "tools/cli_json.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct LocksArgs {
  cli::CommonOptions common;
  std::string prefix;
  std::size_t count = 1000;
  std::string older_than;  // empty: every lock
};

// The age of the oldest hold of `lock` (0 when it has no holders).
client::Millis oldest_hold(const client::LockInfo& lock) {
  client::Millis held{0};
  for (const auto& h : lock.holders) held = std::max(held, h.held);
  return held;
}

int run_locks(const LocksArgs& a) {
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("locks", client.status());
  std::optional<client::Millis> min_age;
  if (!a.older_than.empty()) {
    auto d = cli::parse_duration(a.older_than);
    if (!d) return cli::report("locks", Status(d.status().code(), "--older-than: " + d.status().message()));
    min_age = *d;
  }
  auto locks = (*client)->list_locks(a.prefix, a.count);
  if (!locks) return cli::report("locks", locks.status());
  if (min_age) {
    std::erase_if(*locks, [&](const client::LockInfo& l) { return l.holders.empty() || oldest_hold(l) < *min_age; });
    std::sort(locks->begin(), locks->end(),
              [](const client::LockInfo& x, const client::LockInfo& y) { return oldest_hold(x) > oldest_hold(y); });
  }
  if (a.common.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& lock : *locks) out.push_back(cli::lock_json(lock));
    std::cout << cli::dump(out) << "\n";
    return cli::kExitOk;
  }
  std::cout << fmt::format("{:<32} {:<10} {:>7} {:<20} {:>5} {:>9}\n", "NAME", "MODE", "HOLDERS",
                           "TOKENS", "QUEUE", "HELD-FOR");
  for (const auto& lock : *locks) {
    std::string holders = std::to_string(lock.holders.size());
    if (lock.mode == client::LockMode::kSemaphore) holders += "/" + std::to_string(lock.limit);
    std::string tokens;
    for (const auto& h : lock.holders) tokens += (tokens.empty() ? "" : ",") + std::to_string(h.token);
    const client::Millis held = oldest_hold(lock);
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
      ->check(cli::whole_number(1, 100'000))
      ->capture_default_str();
  cmd->add_option("--older-than", args->older_than,
                  "Only locks held at least this long, oldest first (10m, 1h, 90s): long holds");
  cli::add_common_options(*cmd, args->common, true);
  cmd->callback([args] {
    cli::run_command("locks", [&] { return run_locks(*args); }, &set_exit_code);
  });
}

const bool locks_registered = add_subcommand("locks", &register_locks);

}  // namespace
}  // namespace leasehold::tools
