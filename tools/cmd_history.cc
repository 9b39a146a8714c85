// `leasehold history NAME [--count N] [--json]`: the audit history of a lock,
// newest first: when (wall clock), what (grant, release, expiry, revoke,
// kill, lock-delay), session, owner, token and reason (LOCK.HISTORY).
// Exit 1 when the server keeps no history for NAME (as `info`).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <ctime>
#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/cli_json.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

struct HistoryArgs {
  cli::CommonOptions common;
  std::string name;
  std::size_t count = 20;
};

std::string local_time(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03}", buf, unix_ms % 1000);
}

std::string detail(const client::HistoryEntry& e) {
  std::string out = e.reason;
  if (e.wait_ms >= 0) out += " (waited " + cli::human_duration(client::Millis(e.wait_ms)) + ")";
  if (e.hold_ms >= 0) out += " (held " + cli::human_duration(client::Millis(e.hold_ms)) + ")";
  if (e.event == "lock-delay") out += " (" + cli::human_duration(client::Millis(e.delay_ms)) + ")";
  return out;
}

int run_history(const HistoryArgs& a) {
  auto client = cli::make_client(a.common);
  if (!client) return cli::report("history", client.status());
  auto entries = (*client)->lock_history(a.name, a.count);
  if (!entries) return cli::report("history", entries.status());
  if (a.common.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : *entries) out.push_back(cli::history_json(e));
    std::cout << cli::dump(out) << "\n";
  }
  if (entries->empty()) {
    // As `info NAME` for a lock the server knows nothing of: exit 1.
    return cli::report("history", Status(ErrorCode::kNotFound, "no history for lock '" + a.name + "'"));
  }
  if (a.common.json) return cli::kExitOk;
  std::cout << fmt::format("{:<23} {:<10} {:>8} {:<16} {:>8}  {}\n", "TIME", "EVENT", "SESSION", "OWNER", "TOKEN",
                           "DETAIL");
  for (const auto& e : *entries) {
    std::cout << fmt::format("{:<23} {:<10} {:>8} {:<16} {:>8}  {}\n", local_time(e.time_ms), e.event,
                             e.session == 0 ? std::string("-") : std::to_string(e.session),
                             e.owner.empty() ? "-" : e.owner, e.token == 0 ? std::string("-") : std::to_string(e.token),
                             detail(e));
  }
  return cli::kExitOk;
}

void register_history(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand("history", "Audit history of a lock: grants, releases, expiries, revokes, kills");
  cmd->add_option("name", args->name, "Lock name")->required();
  cmd->add_option("--count", args->count, "At most this many records, newest first")
      ->check(cli::whole_number(1, 10'000))
      ->capture_default_str();
  cli::add_common_options(*cmd, args->common, true);
  cmd->callback([args] {
    cli::run_command("history", [&] { return run_history(*args); }, &set_exit_code);
  });
}

const bool history_registered = add_subcommand("history", &register_history);

}  // namespace
}  // namespace leasehold::tools
