// `leasehold session list [--json]` and `leasehold session kill ID`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <cstdint>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "tools/cli_json.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

constexpr std::size_t kPage = 1000;  // sessions per SESSION.LIST request

struct SessionArgs {
  cli::CommonOptions list_opts;
  cli::CommonOptions kill_opts;
  std::uint64_t id = 0;
};

// A session without expiry (only a compat key that an older server let
// `SET` without PX: SESSION.LIST gives TTL 0, remaining -1) reads "never",
// never "-1ms".
std::string ttl_text(client::Millis ms) { return ms.count() <= 0 ? "never" : cli::human_duration(ms); }
std::string remaining_text(const client::SessionInfo& s) {
  return s.ttl.count() == 0 || s.remaining.count() < 0 ? "never" : cli::human_duration(s.remaining);
}

// Pages through SESSION.LIST (bounded replies), printing each page as it
// comes: memory stays one page however many sessions there are.
int run_list(const cli::CommonOptions& opts) {
  auto client = cli::make_client(opts);
  if (!client) return cli::report("session list", client.status());
  std::uint64_t after = 0;
  std::size_t printed = 0;
  if (!opts.json) {
    std::cout << fmt::format("{:>12} {:>9} {:>10} {:>5} {:>7}  {}\n", "ID", "TTL", "REMAINING", "HELD",
                             "WAITING", "OWNER");
  }
  std::string out = opts.json ? "[" : "";
  while (true) {
    auto page = (*client)->list_sessions_page(after, kPage);
    if (!page) return cli::report("session list", page.status());
    if (page->empty()) break;
    after = page->back().id;
    for (const auto& s : *page) {
      if (opts.json) {
        out += (printed ? "," : "") + cli::dump(cli::session_json(s));
      } else {
        out += fmt::format("{:>12} {:>9} {:>10} {:>5} {:>7}  {}\n", s.id, ttl_text(s.ttl),
                           remaining_text(s), s.held, s.waiting,
                           s.owner.empty() ? "-" : s.owner);
      }
      ++printed;
    }
    std::cout << out << std::flush;
    out.clear();
  }
  if (opts.json) std::cout << out << "]\n";
  return cli::kExitOk;
}

int run_kill(const cli::CommonOptions& opts, std::uint64_t id) {
  auto client = cli::make_client(opts);
  if (!client) return cli::report("session kill", client.status());
  Status st = (*client)->kill_session(id);
  if (st.code() == ErrorCode::kNotFound || st.code() == ErrorCode::kSessionExpired) {
    return cli::report("session kill",
                       Status(ErrorCode::kNotFound, "no live session " + std::to_string(id)));
  }
  if (!st) return cli::report("session kill", st);
  std::cout << "killed session " << id << "\n";
  return cli::kExitOk;
}

void register_session(CLI::App& app) {
  auto args = std::make_shared<SessionArgs>();
  auto* cmd = app.add_subcommand("session", "List or kill sessions (operator)");
  cmd->require_subcommand(1);
  auto* list = cmd->add_subcommand("list", "List the live sessions");
  cli::add_common_options(*list, args->list_opts, true);
  list->callback([args] {
    cli::run_command("session list", [&] { return run_list(args->list_opts); }, &set_exit_code);
  });
  auto* kill = cmd->add_subcommand("kill", "Expire a session now (its locks are freed)");
  // A string checked as a whole number first: "-5" is refused as negative
  // instead of wrapping around to 18446744073709551611.
  kill->add_option("id", args->id, "Session id (a whole number, from `session list`)")
      ->required()
      ->check(cli::whole_number(1, UINT64_MAX));
  cli::add_common_options(*kill, args->kill_opts, false);
  kill->callback([args] {
    cli::run_command("session kill", [&] { return run_kill(args->kill_opts, args->id); },
                     &set_exit_code);
  });
}

const bool session_registered = add_subcommand("session", &register_session);

}  // namespace
}  // namespace leasehold::tools
