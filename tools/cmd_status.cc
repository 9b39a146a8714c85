// `leasehold status [--json]`: the server's role, data dir, log position and
// session / lock counts (from INFO).
#include <CLI/CLI.hpp>

#include <array>
#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "common/text_encoding.h"
#include "tools/cli_json.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

// The INFO fields `status` shows in text mode, in this order.
constexpr std::array<std::string_view, 13> kShown{
    "role",           "listen",          "data_dir",       "leasehold_version", "uptime_in_seconds",
    "applied_revision", "applied_index", "log_last_index", "snapshot_index",    "sessions",
    "locks",          "waiters",         "connected_clients"};

int run_status(const cli::CommonOptions& opts) {
  auto client = cli::make_client(opts);
  if (!client) return cli::report("status", client.status());
  auto text = (*client)->info();
  if (!text) return cli::report("status", text.status());
  const client::ServerInfo info = client::parse_info(*text);
  if (opts.json) {
    nlohmann::json out = {{"endpoint", (*client)->current_endpoint()}};
    for (const auto& [k, v] : info.fields) {
      if (k == "#" || !text::is_valid_utf8(k)) continue;
      cli::put_info_value(out, k, v);  // numbers as JSON numbers, "1.00" included
    }
    std::cout << cli::dump(out) << "\n";
    return cli::kExitOk;
  }
  std::cout << "endpoint: " << (*client)->current_endpoint() << "\n";
  for (std::string_view key : kShown) {
    if (auto v = info.get(key)) std::cout << key << ": " << *v << "\n";
  }
  return cli::kExitOk;
}

void register_status(CLI::App& app) {
  auto opts = std::make_shared<cli::CommonOptions>();
  auto* cmd = app.add_subcommand("status", "Show a server's role, log position and counts");
  cli::add_common_options(*cmd, *opts, true);
  cmd->callback([opts] {
    cli::run_command("status", [&] { return run_status(*opts); }, &set_exit_code);
  });
}

const bool status_registered = add_subcommand("status", &register_status);

}  // namespace
}  // namespace leasehold::tools
