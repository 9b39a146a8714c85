// Locks: LOCK.ACQUIRE / RELEASE / INFO / LIST / REVOKE / CANCEL.
#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "server/security/acl.h"
#include "server/commands/command_args.h"
#include "server/net/connection.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {
namespace {

std::string_view mode_name(core::LockMode m) {
  switch (m) {
    case core::LockMode::kExclusive: return "exclusive";
    case core::LockMode::kShared: return "shared";
    case core::LockMode::kSemaphore: return "semaphore";
  }
  return "unknown";
}

std::int64_t since(core::LogMillis now, core::LogMillis then) {
  return now > then ? static_cast<std::int64_t>(now - then) : 0;
}

// Session ids of other users' sessions are shown only to admins (0 otherwise).
using SessionFilter = std::function<std::int64_t(core::SessionId)>;

void write_lock(resp::Writer& w, const core::LockInfo& l, core::LogMillis now, const SessionFilter& shown) {
  w.map_header(7);
  w.bulk("name");
  w.bulk(l.name);
  w.bulk("mode");
  w.bulk(mode_name(l.mode));
  w.bulk("limit");
  w.integer(l.limit);
  w.bulk("holders");
  w.array_header(l.holders.size());
  for (const auto& h : l.holders) {
    w.map_header(5);
    w.bulk("session");
    w.integer(shown(h.session));
    w.bulk("owner");
    w.bulk(h.owner);
    w.bulk("token");
    w.integer(static_cast<std::int64_t>(h.token));
    w.bulk("held_ms");
    w.integer(since(now, h.acquired_at));
    w.bulk("lease_ms");  // left of the grant's lease; -1 = no lease
    w.integer(h.lease_until == 0 ? -1 : since(h.lease_until, now));
  }
  w.bulk("waiters");
  w.array_header(l.waiters.size());
  for (const auto& q : l.waiters) {
    w.map_header(4);
    w.bulk("session");
    w.integer(shown(q.session));
    w.bulk("owner");
    w.bulk(q.owner);
    w.bulk("mode");
    w.bulk(mode_name(q.mode));
    w.bulk("waited_ms");
    w.integer(since(now, q.queued_at));
  }
  w.bulk("last_token");
  w.integer(static_cast<std::int64_t>(l.last_token));
  w.bulk("delay_ms");
  w.integer(l.delay_until > now ? static_cast<std::int64_t>(l.delay_until - now) : 0);
}

// --max-hold: a lease over the prefix's ceiling is refused; none gets it.
Status apply_max_hold(const ServerConfig& config, core::Acquire& a) {
  const MaxHold* rule = max_hold_for(config.max_hold, a.lock);
  if (rule == nullptr) return Status::ok();
  if (a.lease_ms == 0) {
    a.lease_ms = rule->ms;
  } else if (a.lease_ms > rule->ms) {
    return over_max_hold("LEASE", a.lease_ms, *rule);
  }
  return Status::ok();
}

void lock_acquire(CommandContext& ctx) {
  auto parsed = parse_lock_acquire(ctx.args);
  if (!parsed) return ctx.reply.error(parsed.status());
  core::Command cmd = std::move(parsed).value();
  if (Status st = apply_max_hold(ctx.server.config(), std::get<core::Acquire>(cmd.body)); !st) {
    return ctx.reply.error(st);
  }
  std::string lock = std::get<core::Acquire>(cmd.body).lock;  // for park_wait, once the command is moved
  const core::SessionId session = cmd.session;
  ServerServices* server = &ctx.server;
  std::weak_ptr<Connection> weak = ctx.conn;
  propose(ctx, std::move(cmd), [server, weak, lock = std::move(lock), session](const core::ApplyResult& r,
                                                                               Responder& reply) {
    if (auto conn = weak.lock(); conn && !r.reply.is_error()) server->speak_for(session, *conn);
    switch (r.reply.code) {
      case core::ReplyCode::kOk: return reply.integer(static_cast<std::int64_t>(r.reply.token));
      case core::ReplyCode::kQueued: return server->park_wait(lock, session, reply, weak.lock());
      case core::ReplyCode::kError:
        if (r.reply.error.code() == ErrorCode::kWouldBlock) return reply.null();
        return reply.error(r.reply.error);
    }
  });
}

void lock_release(CommandContext& ctx) {
  auto cmd = parse_lock_release(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  // Not the holder's own request: its watchers learn it (lost, released-by-other).
  auto& release = std::get<core::Release>(cmd->body);
  release.by_other = !ctx.server.speaks_for(release.session, *ctx.conn);
  propose_ok(ctx, std::move(cmd).value());
}

void lock_extend(CommandContext& ctx) {
  auto cmd = parse_lock_extend(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  const auto& extend = std::get<core::ExtendLease>(cmd->body);
  if (const MaxHold* rule = max_hold_for(ctx.server.config().max_hold, extend.lock);
      rule != nullptr && extend.lease_ms > rule->ms) {
    return ctx.reply.error(over_max_hold("LOCK.EXTEND", extend.lease_ms, *rule));
  }
  propose_ok(ctx, std::move(cmd).value());
}

// Allowed to the user that opened both sessions, or to an admin (the table's
// own-session check covers one session argument; this one names two).
void lock_transfer(CommandContext& ctx) {
  auto cmd = parse_lock_transfer(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  const auto& transfer = std::get<core::Transfer>(cmd->body);
  if (ctx.server.acl().auth_required()) {
    const AclUser* user = ctx.server.user_of(*ctx.conn);
    const core::StateMachine& state = ctx.server.node().state();
    for (core::SessionId id : {transfer.from, transfer.to}) {
      auto s = state.session(id);
      if (s && !may_see_session(user, true, s->user)) {
        return ctx.reply.error_text("NOPERM session " + std::to_string(id) +
                                    " belongs to another user (LOCK.TRANSFER needs both sessions' user, or an "
                                    "admin)");
      }
    }
  }
  propose(ctx, std::move(cmd).value(), [](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) return reply.error(r.reply.error);
    reply.integer(static_cast<std::int64_t>(r.reply.token));
  });
}

SessionFilter session_filter(CommandContext& ctx) {
  const AclUser* user = ctx.server.user_of(*ctx.conn);
  const bool auth = ctx.server.acl().auth_required();
  if (may_see_session(user, auth, std::string())) {
    return [](core::SessionId id) { return static_cast<std::int64_t>(id); };
  }
  const core::StateMachine& state = ctx.server.node().state();
  return [user, auth, &state](core::SessionId id) -> std::int64_t {
    auto s = state.session(id);
    return s && may_see_session(user, auth, s->user) ? static_cast<std::int64_t>(id) : 0;
  };
}

void lock_info(CommandContext& ctx) {
  auto l = ctx.server.node().state().lock(ctx.args[1]);
  if (!l) return ctx.reply.null();
  const core::LogMillis now = ctx.server.node().log_now();
  const SessionFilter shown = session_filter(ctx);
  ctx.reply.write([&](resp::Writer& w) { write_lock(w, *l, now, shown); });
}

void lock_list(CommandContext& ctx) {
  const auto& a = ctx.args;
  // The options come in pairs: an odd number of arguments starts with the prefix.
  const bool has_prefix = a.size() % 2 == 0;
  const std::string prefix = has_prefix ? a[1] : std::string();
  ListPage page;
  if (std::string err = parse_list_page(a, has_prefix ? 2 : 1, page, "LOCK.LIST [prefix] [AFTER name] [COUNT n]");
      !err.empty()) {
    return ctx.reply.error_text(err);
  }
  const auto locks = ctx.server.node().state().locks(prefix, page.after, page.count, kListMaxEntries);
  const core::LogMillis now = ctx.server.node().log_now();
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(locks.size());
    for (const auto& l : locks) write_lock(w, l, now, [](core::SessionId id) { return static_cast<std::int64_t>(id); });
  });
}

void lock_revoke(CommandContext& ctx) {
  auto cmd = find_write_parser("LOCK.REVOKE")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  const std::string who = requester(ctx);
  spdlog::info("lock revoke requested lock=\"{}\" by=\"{}\"", ctx.args[1], who);
  ctx.server.observability().note_requester(Observability::revoke_key(ctx.args[1]), who);
  propose_ok(ctx, std::move(cmd).value());
}

void lock_cancel(CommandContext& ctx) {
  auto cmd = find_write_parser("LOCK.CANCEL")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  propose_ok(ctx, std::move(cmd).value());
}

}  // namespace

void add_lock_commands(std::vector<CommandSpec>& out) {
  out.push_back({"LOCK.ACQUIRE", -3, kWrite | kBlocking, "lock",
                 "Acquires a lock: token, nil when not granted (WAIT blocks this connection)",
                 "name session [SHARED | LIMIT n] [WAIT ms] [DELAY ms] [LEASE ms] [SEQ n]", &lock_acquire, kAclLock, {1, 1, 1}, 2});
  out.push_back({"LOCK.RELEASE", -4, kWrite, "lock", "Releases a lock held with this token",
                 "name session token [SEQ n]", &lock_release, kAclLock, {1, 1, 1}, 2});
  out.push_back({"LOCK.INFO", 2, kReadonly, "lock", "Holders, waiters and last token of a lock", "name",
                 &lock_info, kAclRead, {1, 1, 1}});
  out.push_back({"LOCK.LIST", -1, kReadonly | kAdmin, "lock", "One page of locks in name order (empty: the end)",
                 "[prefix] [AFTER name] [COUNT n]", &lock_list, kAclAdmin});
  out.push_back({"LOCK.REVOKE", 2, kWrite | kAdmin, "lock", "Removes every holder (they get a lost push)", "name",
                 &lock_revoke, kAclAdmin, {1, 1, 1}});
  out.push_back({"LOCK.CANCEL", 3, kWrite | kAdmin, "lock", "Cancels a session's queued wait (it gets nil)",
                 "name session", &lock_cancel, kAclAdmin, {1, 1, 1}});
  out.push_back({"LOCK.EXTEND", 5, kWrite, "lock", "Extends the lease of a held lock: it now ends ms from now",
                 "name session token ms", &lock_extend, kAclLock, {1, 1, 1}, 2});
  out.push_back({"LOCK.TRANSFER", 5, kWrite, "lock",
                 "Moves a held lock to another live session, with a new token (old holder: lost push)",
                 "name from_session token to_session", &lock_transfer, kAclLock, {1, 1, 1}});
}

}  // namespace leasehold::server
