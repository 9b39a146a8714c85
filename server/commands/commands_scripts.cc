// EVAL / EVALSHA / SCRIPT for the recognised lock scripts only
// (server/commands/script_catalog.h, docs/redis-compat.md). No Lua runs: each
// recognised script is executed as the equivalent durable compat operation.
#include <fmt/format.h>

#include "server/commands/handler_util.h"
#include "server/commands/script_catalog.h"

namespace leasehold::server {
namespace {

constexpr std::string_view kNotLua =
    "ERR leasehold runs no Lua: this script is not one of the recognised lock scripts (redis-py Lock "
    "release/extend/reacquire, the compare-and-delete release of the Redis docs and Redlock). Use the "
    "native commands instead: DELIFEQ key value (safe release), PEXPIRE key ms, SET key value NX PX ms, "
    "or LOCK.ACQUIRE / LOCK.RELEASE with fencing tokens (docs/redis-compat.md)";

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// Answers -REDIRECT / -UNAVAILABLE on a standby; true when it did.
bool refused_on_standby(CommandContext& ctx) {
  if (ctx.server.node().role() == node::Role::kPrimary) return false;
  const std::string primary = ctx.server.node().primary_address();
  ctx.reply.error(primary.empty() ? Status(ErrorCode::kUnavailable, "no primary known")
                                  : Status(ErrorCode::kRedirect, primary));
  return true;
}

// Redis PEXPIRE inside the script: a TTL <= 0 deletes the key. The script
// returns 1 once it got past its ownership check, 0 when the key changed
// hands (or ended) before the write applied: the write names the session
// that held the matching value, so it cannot touch a later holder's key.
void owned_pexpire(CommandContext& ctx, const core::CompatValue& held, const std::string& key,
                   std::int64_t ttl_ms) {
  core::Command cmd;
  if (ttl_ms <= 0) {
    cmd.body = core::CompatDelete{key, held.value};
  } else {
    cmd.body = core::SetSessionTtl{held.session, static_cast<std::uint64_t>(ttl_ms)};
  }
  const bool deleting = ttl_ms <= 0;
  propose(ctx, std::move(cmd), [deleting](const core::ApplyResult& r, Responder& reply) {
    if (r.reply.is_error()) {
      if (r.reply.error.code() == ErrorCode::kSessionExpired) return reply.integer(0);
      return reply.error(r.reply.error);
    }
    reply.integer(deleting ? static_cast<std::int64_t>(r.reply.count) : 1);
  });
}

void run_extend_or_reacquire(CommandContext& ctx, ScriptOp op, const std::string& key,
                             const std::vector<std::string>& argv) {
  if (refused_on_standby(ctx)) return;
  auto ms = parse_int(argv[1], "script argument ARGV[2] (milliseconds)", INT64_MIN / 2, INT64_MAX / 2);
  if (!ms) return ctx.reply.error(ms.status());
  const auto held = ctx.server.node().state().compat_get(key);
  if (!held || held->value != argv[0]) return ctx.reply.integer(0);
  std::int64_t ttl = *ms;
  if (op == ScriptOp::kExtend) {
    const auto remaining = ctx.server.node().remaining_ms(held->session);
    if (!remaining || *remaining == node::kNeverExpires) return ctx.reply.integer(0);
    if (argv[2] == "0") ttl += static_cast<std::int64_t>(*remaining);
  }
  owned_pexpire(ctx, *held, key, ttl);
}

// args[first] is numkeys, then the keys, then ARGV.
void run_script(CommandContext& ctx, ScriptOp op, std::size_t first) {
  auto numkeys = parse_int(ctx.args[first], "number of keys", INT64_MIN, INT64_MAX);
  if (!numkeys) return ctx.reply.error_text("ERR value is not an integer or out of range");
  if (*numkeys < 0) return ctx.reply.error_text("ERR Number of keys can't be negative");
  const std::size_t available = ctx.args.size() - first - 1;
  if (static_cast<std::uint64_t>(*numkeys) > available) {
    return ctx.reply.error_text("ERR Number of keys can't be greater than number of args");
  }
  if (*numkeys != 1) {
    return ctx.reply.error_text(
        fmt::format("ERR this lock script takes exactly one key (KEYS[1]), not {}", *numkeys));
  }
  const std::string& key = ctx.args[first + 1];
  const std::vector<std::string> argv(ctx.args.begin() + static_cast<std::ptrdiff_t>(first) + 2, ctx.args.end());
  if (argv.size() < script_op_argc(op)) {
    return ctx.reply.error_text(fmt::format("ERR this lock script needs {} ARGV values, got {}",
                                            script_op_argc(op), argv.size()));
  }
  if (op == ScriptOp::kDeleteIfEqual) {
    core::Command cmd;
    cmd.body = core::CompatDelete{key, argv[0]};
    return propose(ctx, std::move(cmd), [](const core::ApplyResult& r, Responder& reply) {
      if (r.reply.is_error()) return reply.error(r.reply.error);
      reply.integer(static_cast<std::int64_t>(r.reply.count));
    });
  }
  run_extend_or_reacquire(ctx, op, key, argv);
}

void eval(CommandContext& ctx) {
  const auto loaded = ScriptCache::instance().load(ctx.args[1]);  // EVAL caches, like Redis
  if (!loaded) return ctx.reply.error_text(kNotLua);
  run_script(ctx, loaded->second, 2);
}

void evalsha(CommandContext& ctx) {
  const auto op = ScriptCache::instance().find(ctx.args[1]);
  if (!op) return ctx.reply.error_text(kNoScript);
  run_script(ctx, *op, 2);
}

void script(CommandContext& ctx) {
  const std::string& sub = ctx.args[1];
  if (iequals(sub, "LOAD") && ctx.args.size() == 3) {
    const auto loaded = ScriptCache::instance().load(ctx.args[2]);
    if (!loaded) return ctx.reply.error_text(kNotLua);
    return ctx.reply.bulk(loaded->first);
  }
  if (iequals(sub, "EXISTS") && ctx.args.size() >= 3) {
    return ctx.reply.write([&](resp::Writer& w) {
      w.array_header(ctx.args.size() - 2);
      for (std::size_t i = 2; i < ctx.args.size(); ++i) {
        w.integer(ScriptCache::instance().find(ctx.args[i]) ? 1 : 0);
      }
    });
  }
  if (iequals(sub, "FLUSH") &&
      (ctx.args.size() == 2 || (ctx.args.size() == 3 && (iequals(ctx.args[2], "SYNC") || iequals(ctx.args[2], "ASYNC"))))) {
    ScriptCache::instance().flush();
    return ctx.reply.ok();
  }
  ctx.reply.error_text(fmt::format("ERR unknown subcommand or wrong number of arguments for 'script|{}'",
                                   sub.substr(0, 32)));
}

}  // namespace

// ACL: the compat-key category (fence); every recognised script has one key
// (numkeys 1), at argument 3, which is checked against the user's patterns.
// No kWrite flag on EVAL/EVALSHA: they start only after the connection's
// earlier commands are answered (a write may not start early), because the
// extend/reacquire scripts read the key before proposing.
void add_script_commands(std::vector<CommandSpec>& out) {
  out.push_back({"EVAL", -3, 0, "scripting",
                 "Runs a recognised lock script natively (no Lua; others get -ERR naming DELIFEQ)",
                 "script numkeys [key ...] [arg ...]", &eval, kAclFence, {3, 3, 1}});
  out.push_back({"EVALSHA", -3, 0, "scripting", "Runs a recognised lock script by SHA1 (-NOSCRIPT if unknown)",
                 "sha1 numkeys [key ...] [arg ...]", &evalsha, kAclFence, {3, 3, 1}});
  out.push_back({"SCRIPT", -2, kFast, "scripting", "LOAD a recognised lock script, EXISTS sha1..., FLUSH",
                 "LOAD script | EXISTS sha1 [sha1 ...] | FLUSH [ASYNC|SYNC]", &script, kAclFence});
}

}  // namespace leasehold::server
