// Sessions: SESSION.OPEN / KEEPALIVE / CLOSE / LIST / KILL / WATCH.
#include <spdlog/spdlog.h>

#include "server/connection.h"
#include "server/handler_util.h"

namespace leasehold::server {
namespace {

std::int64_t remaining_for(Server& server, core::SessionId id) {
  auto r = server.node().remaining_ms(id);
  if (!r) return 0;
  if (*r == node::kNeverExpires) return -1;
  return static_cast<std::int64_t>(*r);
}

void session_open(CommandContext& ctx) {
  auto ttl = parse_uint(ctx.args[1], "ttl_ms", 1, UINT64_MAX);
  if (!ttl) return ctx.reply.error(ttl.status());
  core::OpenSession body;
  body.ttl_ms = *ttl;
  if (ctx.args.size() == 4 && iequals(ctx.args[2], "OWNER")) {
    body.owner = ctx.args[3];
  } else if (ctx.args.size() != 2) {
    return ctx.reply.error_text(syntax_error("want SESSION.OPEN ttl_ms [OWNER label]"));
  }
  // With authentication on, the session belongs to this user (server/acl.h).
  if (ctx.server.acl().auth_required()) body.user = ctx.conn->user();
  core::Command cmd;
  cmd.body = std::move(body);
  Server* server = &ctx.server;
  std::weak_ptr<Connection> weak = ctx.conn;
  propose(ctx, std::move(cmd), [server, weak](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) return reply.error(r.reply.error);
    if (auto conn = weak.lock()) server->speak_for(r.reply.session, *conn);
    reply.integer(static_cast<std::int64_t>(r.reply.session));
  });
}

void session_keepalive(CommandContext& ctx) {
  const core::SessionId id = session_arg(ctx, 1);
  if (id == 0) return;
  auto r = ctx.server.node().keepalive(id);
  if (!r) return ctx.reply.error(r.status());
  ctx.server.observability().metrics().count_keepalive();
  ctx.server.speak_for(id, *ctx.conn);
  ctx.reply.integer(*r == node::kNeverExpires ? -1 : static_cast<std::int64_t>(*r));
}

void session_close(CommandContext& ctx) {
  const core::SessionId id = session_arg(ctx, 1);
  if (id == 0) return;
  core::Command cmd;
  cmd.body = core::CloseSession{id};
  propose_ok(ctx, std::move(cmd));
}

void session_kill(CommandContext& ctx) {
  const core::SessionId id = session_arg(ctx, 1);
  if (id == 0) return;
  if (!ctx.server.node().state().session(id)) {
    return ctx.reply.error(Status(ErrorCode::kNotFound, "no such session"));
  }
  const std::string who = requester(ctx);
  spdlog::info("session kill requested session={} by=\"{}\"", id, who);
  ctx.server.observability().note_requester(Observability::kill_key(id), who);
  core::Command cmd;
  cmd.body = core::KillSession{id};
  propose(ctx, std::move(cmd), [](const core::ApplyResult& r, Responder& reply) {
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
  Server& server = ctx.server;
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
  out.push_back({"SESSION.OPEN", -2, kWrite, "session", "Opens a session; returns its id", "ttl_ms [OWNER label]",
                 &session_open, kAclLock});
  out.push_back({"SESSION.KEEPALIVE", 2, kFast, "session",
                 "Renews a session's TTL (in memory); returns the TTL now remaining", "session", &session_keepalive, kAclLock, {}, 1});
  out.push_back({"SESSION.CLOSE", 2, kWrite, "session", "Closes a session, releasing its locks", "session",
                 &session_close, kAclLock, {}, 1});
  out.push_back({"SESSION.LIST", -1, kReadonly | kAdmin, "session",
                 "One page of live sessions in id order (empty: the end)", "[AFTER id] [COUNT n]", &session_list,
                 kAclAdmin});
  out.push_back({"SESSION.KILL", 2, kWrite | kAdmin, "session", "Expires a session now (lock-delay applies)",
                 "session", &session_kill, kAclAdmin});
  out.push_back({"SESSION.WATCH", 2, kReadonly | kFast, "session",
                 "RESP3: push lost / session-ended notices for a session to this connection", "session",
                 &session_watch, kAclLock, {}, 1});
}

}  // namespace leasehold::server
