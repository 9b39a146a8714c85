// Sessions: SESSION.OPEN / KEEPALIVE / CLOSE / LIST / KILL / WATCH.
#include <spdlog/spdlog.h>

#include "server/commands/command_args.h"
#include "server/net/connection.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {
namespace {

std::int64_t remaining_for(ServerServices& server, core::SessionId id) {
  auto r = server.node().remaining_ms(id);
  if (!r) return 0;
  if (*r == node::kNeverExpires) return -1;
  return static_cast<std::int64_t>(*r);
}

void session_open(CommandContext& ctx) {
  auto cmd = parse_session_open(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  // With authentication on, the session belongs to this user (server/security/acl.h).
  if (ctx.server.acl().auth_required()) std::get<core::OpenSession>(cmd->body).user = ctx.conn->user();
  const bool onclose = std::get<core::OpenSession>(cmd->body).close_grace_ms.has_value();
  const bool reqid = !std::get<core::OpenSession>(cmd->body).reqid.empty();
  ServerServices* server = &ctx.server;
  std::weak_ptr<Connection> weak = ctx.conn;
  propose(ctx, std::move(cmd).value(),
          [server, weak, onclose, reqid](const core::ApplyResult& r, Responder& reply) {
            if (r.reply.is_error()) return reply.error(r.reply.error);
            const core::SessionId id = r.reply.session;
            // A REQID retry may answer a session opened a while ago: it starts
            // a fresh TTL, as a keepalive would.
            if (reqid) (void)server->node().keepalive(id);
            auto conn = weak.lock();
            if (conn) server->speak_for(id, *conn);
            // ONCLOSE binds the session to this connection (see close_bindings.h);
            // the session's own grace decides, also for a retry.
            if (conn && !conn->closed()) {
              const auto info = server->node().state().session(id);
              if (info && info->close_grace_ms) server->close_bindings().bind(id, conn->id());
            } else if (onclose) {
              // The connection closed before the reply: as if it closed right after.
              server->close_bindings().bind(id, 0);
              const bool by_peer = !conn || conn->closed_by_peer();
              server->close_bindings().connection_closed(0, by_peer, [server](core::SessionId s) {
                const auto info = server->node().state().session(s);
                return info ? info->close_grace_ms : std::nullopt;
              });
            }
            reply.integer(static_cast<std::int64_t>(id));
          });
}

// SESSION.KEEPALIVE id [BIND]: BIND (re)binds an ONCLOSE session to this
// connection, e.g. after a reconnect or a failover; any keepalive cancels a
// close grace that is running.
void session_keepalive(CommandContext& ctx) {
  const core::SessionId id = session_arg(ctx, 1);
  if (id == 0) return;
  const bool bind = ctx.args.size() >= 3;
  if (ctx.args.size() > 3 || (bind && !iequals(ctx.args[2], "BIND"))) return ctx.reply.error_text("ERR syntax error: want SESSION.KEEPALIVE session [BIND]");
  // Its ONCLOSE end is proposed: about to end, like a session whose expiry is.
  if (ctx.server.close_bindings().ending(id)) {
    return ctx.reply.error(Status(ErrorCode::kSessionExpired, "the session is ending: its ONCLOSE connection closed"));
  }
  if (bind) {
    const auto info = ctx.server.node().state().session(id);
    if (info && !info->close_grace_ms) {
      return ctx.reply.error(Status(ErrorCode::kInvalidArgument, "the session was opened without ONCLOSE: nothing to bind"));
    }
  }
  auto r = ctx.server.node().keepalive(id);
  if (!r) return ctx.reply.error(r.status());
  ctx.server.observability().metrics().count_keepalive();
  ctx.server.speak_for(id, *ctx.conn);
  if (bind) {
    ctx.server.close_bindings().bind(id, ctx.conn->id());
  } else {
    ctx.server.close_bindings().keepalive(id);
  }
  ctx.reply.integer(*r == node::kNeverExpires ? -1 : static_cast<std::int64_t>(*r));
}

void session_close(CommandContext& ctx) {
  auto cmd = find_write_parser("SESSION.CLOSE")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  propose_ok(ctx, std::move(cmd).value());
}

void session_kill(CommandContext& ctx) {
  auto cmd = find_write_parser("SESSION.KILL")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  if (!ctx.server.node().state().session(std::get<core::KillSession>(cmd->body).session)) {
    return ctx.reply.error(Status(ErrorCode::kNotFound, "no such session"));
  }
  const core::SessionId id = std::get<core::KillSession>(cmd->body).session;
  const std::string who = requester(ctx);
  spdlog::info("session kill requested session={} by=\"{}\"", id, who);
  ctx.server.observability().note_requester(Observability::kill_key(id), who);
  propose(ctx, std::move(cmd).value(), [](const core::ApplyResult& r, Responder& reply) {
    if (!r.reply.is_error()) return reply.ok();
    if (r.reply.error.code() == ErrorCode::kSessionExpired) {
      return reply.error(Status(ErrorCode::kNotFound, "no such session"));
    }
    reply.error(r.reply.error);
  });
}

void session_list(CommandContext& ctx) {
  ListPage page;
  if (std::string err = parse_list_page(ctx.args, 1, page, "SESSION.LIST [AFTER id] [COUNT n]"); !err.empty()) {
    return ctx.reply.error_text(err);
  }
  core::SessionId after = 0;
  if (!page.after.empty()) {
    auto id = parse_uint(page.after, "AFTER", 0, UINT64_MAX);
    if (!id) return ctx.reply.error(id.status());
    after = *id;
  }
  const auto sessions = ctx.server.node().state().sessions(after, page.count);
  ServerServices& server = ctx.server;
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(sessions.size());
    for (const auto& s : sessions) {
      w.map_header(6);
      w.bulk("id");
      w.integer(static_cast<std::int64_t>(s.id));
      w.bulk("owner");
      w.bulk(s.owner);
      w.bulk("ttl_ms");
      w.integer(static_cast<std::int64_t>(s.ttl_ms));
      w.bulk("remaining_ms");
      w.integer(remaining_for(server, s.id));
      w.bulk("held");
      w.integer(s.held);
      w.bulk("waiting");
      w.integer(s.waiting);
    }
  });
}

void session_watch(CommandContext& ctx) {
  const core::SessionId id = session_arg(ctx, 1);
  if (id == 0) return;
  if (ctx.conn->protocol() != resp::Protocol::kResp3) {
    return ctx.reply.error_text("ERR SESSION.WATCH needs RESP3 (send HELLO 3 first)");
  }
  if (!ctx.server.node().state().session(id)) {
    return ctx.reply.error(Status(ErrorCode::kSessionExpired, "the session is not live"));
  }
  ctx.server.watch(id, ctx.conn);
  ctx.reply.ok();
}

}  // namespace

void add_session_commands(std::vector<CommandSpec>& out) {
  out.push_back({"SESSION.OPEN", -2, kWrite, "session",
                 "Opens a session; returns its id (ONCLOSE: ends when this connection closes; REQID: retry-safe)",
                 "ttl_ms [OWNER label] [ONCLOSE grace_ms] [REQID r]", &session_open, kAclLock});
  out.push_back({"SESSION.KEEPALIVE", -2, kFast, "session",
                 "Renews a session's TTL (in memory); returns the TTL now remaining (BIND: ONCLOSE binds to this connection)",
                 "session [BIND]", &session_keepalive, kAclLock, {}, 1});
  out.push_back({"SESSION.CLOSE", 2, kWrite, "session", "Closes a session, releasing its locks", "session",
                 &session_close, kAclLock, {}, 1});
  out.push_back({"SESSION.LIST", -1, kReadonly | kAdmin, "session",
                 "One page of live sessions in id order (empty: the end)", "[AFTER id] [COUNT n]", &session_list,
                 kAclAdmin});
  out.push_back({"SESSION.KILL", 2, kWrite | kAdmin, "session", "Expires a session now (lock-delay applies)",
                 "session", &session_kill, kAclAdmin, {}, 0, 1U << 1});
  out.push_back({"SESSION.WATCH", 2, kReadonly | kFast, "session",
                 "RESP3: push lost / session-ended notices for a session to this connection", "session",
                 &session_watch, kAclLock, {}, 1});
}

}  // namespace leasehold::server
