// server/commands/handler_util.h: small helpers shared by the command handler files.
//
// Thread-safety: loop thread only.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/command.h"
#include "core/reply.h"
#include "server/base/args.h"
#include "server/commands/command_table.h"
#include "server/net/connection.h"
#include "server/services/server_services.h"

namespace leasehold::server {

// Proposes `command`; `then(result, reply)` runs on the loop thread once it
// is durable and applied (or refused by the node).
inline void propose(CommandContext& ctx, core::Command command,
                    std::function<void(const core::ApplyResult&, Responder&)> then) {
  Responder reply = ctx.reply;
  ctx.server.node().propose(std::move(command),
                            [reply, then = std::move(then)](const core::ApplyResult& result) mutable {
                              then(result, reply);
                            });
}

// Proposes and answers +OK, or the error.
inline void propose_ok(CommandContext& ctx, core::Command command) {
  propose(ctx, std::move(command), [](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) {
      reply.error(r.reply.error);
    } else {
      reply.ok();
    }
  });
}

// A session id argument (>= 1); answers the error and returns 0 when bad.
inline core::SessionId session_arg(CommandContext& ctx, std::size_t index) {
  auto id = parse_uint(ctx.args[index], "session", 1, UINT64_MAX);
  if (!id) {
    ctx.reply.error(id.status());
    return 0;
  }
  return *id;
}

// Who sent this request, for operator-action logs and the audit history:
// "peer 127.0.0.1:5000 id=7 name=ops" (name only when set; a user once
// authentication lands).
inline std::string requester(const CommandContext& ctx) {
  std::string who = "peer " + ctx.conn->peer() + " id=" + std::to_string(ctx.conn->id());
  if (!ctx.conn->name().empty()) who += " name=" + ctx.conn->name();
  return who;
}

inline std::string syntax_error(std::string_view detail) { return "ERR syntax error: " + std::string(detail); }

// Paged listings (SESSION.LIST, LOCK.LIST): every reply is bounded. A page
// holds at most COUNT items (default kListDefaultCount, at most
// kListMaxCount) after the cursor AFTER (the last item of the previous page);
// an empty page is the end.
inline constexpr std::uint64_t kListDefaultCount = 1000;
inline constexpr std::uint64_t kListMaxCount = 10'000;
// LOCK.LIST also stops after the lock that brings the holders + waiters it
// lists to this many (LOCK.INFO shows one lock in full).
inline constexpr std::size_t kListMaxEntries = 10'000;

struct ListPage {
  std::string after;  // empty: from the start
  std::uint64_t count = kListDefaultCount;
};

// Parses `[AFTER cursor] [COUNT n]` from args[from..]. Empty string: OK,
// else the error text to answer.
inline std::string parse_list_page(const std::vector<std::string>& args, std::size_t from, ListPage& page,
                                   std::string_view usage) {
  for (std::size_t i = from; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return syntax_error(fmt::format("want {}", usage));
    if (iequals(args[i], "AFTER")) {
      page.after = args[i + 1];
    } else if (iequals(args[i], "COUNT")) {
      auto n = parse_uint(args[i + 1], "COUNT", 1, kListMaxCount);
      if (!n) return "ERR " + n.status().message();
      page.count = *n;
    } else {
      return syntax_error(fmt::format("want {}", usage));
    }
  }
  return {};
}

}  // namespace leasehold::server
