// Redis-compatible efficiency locks: SET / GET / DEL / DELIFEQ / PTTL / PEXPIRE.
// Each key is an exclusive lock held by an implicit session whose TTL is the
// key's expiry (core CompatSet / CompatDelete / SetSessionTtl).
#include <memory>

#include <fmt/format.h>

#include "server/commands/command_args.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {
namespace {

void compat_set(CommandContext& ctx) {
  auto parsed = parse_compat_set(ctx.args);
  if (!parsed) return ctx.reply.error(parsed.status());
  const bool want_token = parsed->want_token;
  core::Command cmd = std::move(parsed->command);
  const core::CompatSet& body = std::get<core::CompatSet>(cmd.body);
  const std::string key = body.key;
  const auto condition = body.condition;
  const bool return_old = body.return_old;
  ServerServices* server = &ctx.server;
  propose(ctx, std::move(cmd), [=](const core::ApplyResult& r, Responder& reply) {
    if (!r.reply.is_error()) {
      if (want_token) return reply.integer(static_cast<std::int64_t>(r.reply.token));
      if (return_old) return r.reply.value ? reply.bulk(*r.reply.value) : reply.null();
      return reply.ok();
    }
    if (r.reply.error.code() != ErrorCode::kConflict || condition == core::CompatCondition::kNone) {
      return reply.error(r.reply.error);
    }
    // NX/XX not met -> nil (Redis); a key held through LOCK.ACQUIRE -> -CONFLICT.
    const core::StateMachine& sm = server->node().state();
    const auto current = sm.compat_get(key);
    const auto native = sm.lock(key);
    const bool held_natively = !current && native && !native->holders.empty();
    if (held_natively) return reply.error(r.reply.error);
    if (return_old && current) return reply.bulk(current->value);
    reply.null();
  });
}

void compat_get(CommandContext& ctx) {
  auto v = ctx.server.node().state().compat_get(ctx.args[1]);
  if (!v) return ctx.reply.null();
  ctx.reply.bulk(v->value);
}

void compat_del(CommandContext& ctx) {
  struct Tally {
    std::size_t remaining = 0;
    std::int64_t deleted = 0;
    Status first_error;
  };
  auto tally = std::make_shared<Tally>();
  tally->remaining = ctx.args.size() - 1;
  for (std::size_t i = 1; i < ctx.args.size(); ++i) {
    core::Command cmd;
    cmd.body = core::CompatDelete{ctx.args[i], std::nullopt};
    propose(ctx, std::move(cmd), [tally](const core::ApplyResult& r, Responder& reply) {
      if (r.reply.is_error()) {
        if (tally->first_error.is_ok()) tally->first_error = r.reply.error;
      } else {
        tally->deleted += static_cast<std::int64_t>(r.reply.count);
      }
      if (--tally->remaining > 0) return;
      if (!tally->first_error.is_ok()) return reply.error(tally->first_error);
      reply.integer(tally->deleted);
    });
  }
}

void compat_delifeq(CommandContext& ctx) {
  auto cmd = find_write_parser("DELIFEQ")(ctx.args);
  if (!cmd) return ctx.reply.error(cmd.status());
  propose(ctx, std::move(cmd).value(), [](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) return reply.error(r.reply.error);
    reply.integer(static_cast<std::int64_t>(r.reply.count));
  });
}

void compat_pttl(CommandContext& ctx) {
  auto v = ctx.server.node().state().compat_get(ctx.args[1]);
  if (!v) return ctx.reply.integer(-2);
  auto remaining = ctx.server.node().remaining_ms(v->session);
  if (!remaining) return ctx.reply.integer(-2);
  if (*remaining == node::kNeverExpires) return ctx.reply.integer(-1);
  ctx.reply.integer(static_cast<std::int64_t>(*remaining));
}

void compat_pexpire(CommandContext& ctx) {
  auto ms = parse_pexpire_ms(ctx.args[2]);
  if (!ms) return ctx.reply.error(ms.status());
  auto v = ctx.server.node().state().compat_get(ctx.args[1]);
  if (!v) return ctx.reply.integer(0);
  core::Command cmd;
  if (*ms <= 0) {
    cmd.body = core::CompatDelete{ctx.args[1], std::nullopt};  // Redis: a past expiry deletes
  } else {
    cmd.body = core::SetSessionTtl{v->session, static_cast<std::uint64_t>(*ms)};
  }
  propose(ctx, std::move(cmd), [](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) {
      if (r.reply.error.code() == ErrorCode::kSessionExpired) return reply.integer(0);
      return reply.error(r.reply.error);
    }
    reply.integer(1);
  });
}

}  // namespace

void add_compat_commands(std::vector<CommandSpec>& out) {
  out.push_back({"SET", -3, kWrite, "compat", "Efficiency lock: set a key with an expiry (NX/XX, PX/EX required, GET, TOKEN)",
                 "key value [NX | XX] (PX ms | EX s) [GET] [TOKEN]", &compat_set, kAclFence, {1, 1, 1}});
  out.push_back({"GET", 2, kReadonly | kFast, "compat", "The value of a compat key", "key", &compat_get, kAclFence, {1, 1, 1}});
  out.push_back({"DEL", -2, kWrite, "compat", "Deletes compat keys; returns how many", "key [key ...]",
                 &compat_del, kAclFence, {1, -1, 1}});
  out.push_back({"DELIFEQ", 3, kWrite, "compat", "Deletes a key only if it holds this value (safe unlock)",
                 "key value", &compat_delifeq, kAclFence, {1, 1, 1}});
  out.push_back({"PTTL", 2, kReadonly | kFast, "compat", "ms until the key expires; -1 no expiry, -2 no key", "key",
                 &compat_pttl, kAclFence, {1, 1, 1}});
  out.push_back({"PEXPIRE", 3, kWrite, "compat", "Sets a key's expiry in ms; 1 if set, 0 if no key", "key ms",
                 &compat_pexpire, kAclFence, {1, 1, 1}});
}

}  // namespace leasehold::server
