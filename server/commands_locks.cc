// Locks: LOCK.ACQUIRE / RELEASE / INFO / LIST / REVOKE / CANCEL.
#include <fmt/format.h>

#include "server/command_args.h"
#include "server/connection.h"
#include "server/handler_util.h"

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

void write_lock(resp::Writer& w, const core::LockInfo& l, core::LogMillis now) {
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
    w.map_header(4);
    w.bulk("session");
    w.integer(static_cast<std::int64_t>(h.session));
    w.bulk("owner");
    w.bulk(h.owner);
    w.bulk("token");
    w.integer(static_cast<std::int64_t>(h.token));
    w.bulk("held_ms");
    w.integer(since(now, h.acquired_at));
  }
  w.bulk("waiters");
  w.array_header(l.waiters.size());
  for (const auto& q : l.waiters) {
    w.map_header(4);
    w.bulk("session");
    w.integer(static_cast<std::int64_t>(q.session));
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

void lock_acquire(CommandContext& ctx) {
  auto parsed = parse_lock_acquire(ctx.args);
  if (!parsed) return ctx.reply.error(parsed.status());
  core::Command cmd = std::move(parsed).value();
  const std::string lock = std::get<core::Acquire>(cmd.body).lock;
  const core::SessionId session = cmd.session;
  Server* server = &ctx.server;
  std::weak_ptr<Connection> weak = ctx.conn;
  propose(ctx, std::move(cmd), [server, weak, lock, session](const core::ApplyResult& r, Responder& reply) {
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
  propose_ok(ctx, std::move(cmd).value());
}

void lock_info(CommandContext& ctx) {
  auto l = ctx.server.node().state().lock(ctx.args[1]);
  if (!l) return ctx.reply.null();
  const core::LogMillis now = ctx.server.node().log_now();
  ctx.reply.write([&](resp::Writer& w) { write_lock(w, *l, now); });
}

void lock_list(CommandContext& ctx) {
  std::string prefix;
  std::uint64_t count = 1000;
  const auto& a = ctx.args;
  std::size_t i = 1;
  if (a.size() == 2 || a.size() == 4) prefix = a[i++];
  if (i < a.size()) {
    if (!iequals(a[i], "COUNT") || i + 1 >= a.size()) {
      return ctx.reply.error_text(syntax_error("want LOCK.LIST [prefix] [COUNT n]"));
    }
    auto n = parse_uint(a[i + 1], "COUNT", 1, 100'000);
    if (!n) return ctx.reply.error(n.status());
    count = *n;
  }
  const auto locks = ctx.server.node().state().locks(prefix, count);
  const core::LogMillis now = ctx.server.node().log_now();
  ctx.reply.write([&](resp::Writer& w) {
    w.array_header(locks.size());
    for (const auto& l : locks) write_lock(w, l, now);
  });
}

void lock_revoke(CommandContext& ctx) {
  auto cmd = find_write_parser("LOCK.REVOKE")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
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
                 "name session [SHARED | LIMIT n] [WAIT ms] [DELAY ms] [SEQ n]", &lock_acquire});
  out.push_back({"LOCK.RELEASE", -4, kWrite, "lock", "Releases a lock held with this token",
                 "name session token [SEQ n]", &lock_release});
  out.push_back({"LOCK.INFO", 2, kReadonly, "lock", "Holders, waiters and last token of a lock", "name",
                 &lock_info});
  out.push_back({"LOCK.LIST", -1, kReadonly | kAdmin, "lock", "Locks in name order", "[prefix] [COUNT n]",
                 &lock_list});
  out.push_back({"LOCK.REVOKE", 2, kWrite | kAdmin, "lock", "Removes every holder (they get a lost push)", "name",
                 &lock_revoke});
  out.push_back({"LOCK.CANCEL", 3, kWrite | kAdmin, "lock", "Cancels a session's queued wait (it gets nil)",
                 "name session", &lock_cancel});
}

}  // namespace leasehold::server
