// server/handler_util.h: small helpers shared by the command handler files.
//
// Thread-safety: loop thread only.
#pragma once

#include <functional>
#include <string>

#include "core/command.h"
#include "core/reply.h"
#include "server/args.h"
#include "server/command_table.h"
#include "server/connection.h"
#include "server/server.h"

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

}  // namespace leasehold::server
