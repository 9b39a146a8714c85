// Authentication and users: AUTH, ACL WHOAMI / LIST / LOAD / CAT (docs/security.md).
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include "server/security/acl.h"
#include "server/commands/auth.h"
#include "server/net/connection.h"
#include "server/commands/handler_util.h"

namespace leasehold::server {

bool authenticate(CommandContext& ctx, std::string_view user, std::string_view password) {
  const AclUser* u = ctx.server.acl().find(user);
  // The hash is computed even for an unknown user: same work either way.
  const bool ok = u != nullptr ? u->password_ok(password) : (hash_password(password), false);
  if (ok && u->enabled) {
    ctx.conn->set_user(std::string(user));
    ctx.conn->set_auth_failures(0);
    spdlog::debug("client authenticated id={} peer={} user={}", ctx.conn->id(), ctx.conn->peer(), u->name);
    return true;
  }
  const unsigned failures = ctx.conn->auth_failures() + 1;
  ctx.conn->set_auth_failures(failures);
  const ServerConfig& cfg = ctx.server.config();
  std::chrono::milliseconds delay = cfg.auth_fail_delay * (std::int64_t{1} << std::min(failures - 1, 16u));
  delay = std::min(delay, cfg.auth_fail_delay_max);
  spdlog::warn("client authentication failed id={} peer={} user=\"{}\" failures_in_a_row={} delay_ms={}",
               ctx.conn->id(), ctx.conn->peer(), user.substr(0, 128), failures, delay.count());
  ctx.server.delay_error(ctx.reply, std::string(kWrongPassError), delay);
  return false;
}

namespace {

void auth(CommandContext& ctx) {
  if (ctx.args.size() == 2) {
    if (!ctx.server.acl().auth_required()) {
      return ctx.reply.error_text(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
    }
    if (authenticate(ctx, "default", ctx.args[1])) ctx.reply.ok();
  } else if (ctx.args.size() == 3) {
    if (authenticate(ctx, ctx.args[1], ctx.args[2])) ctx.reply.ok();
  } else {
    ctx.reply.error_text("ERR syntax error");
  }
}

void acl(CommandContext& ctx) {
  const std::string& sub = ctx.args[1];
  const AclUser* me = ctx.server.user_of(*ctx.conn);
  const bool admin = me != nullptr && me->admin();
  auto deny = [&] {
    ctx.reply.error_text(fmt::format("NOPERM User {} has no permissions to run the 'acl|{}' command",
                                     me != nullptr ? me->name : "", to_upper(sub.substr(0, 16))));
  };
  if (iequals(sub, "WHOAMI") && ctx.args.size() == 2) {
    ctx.reply.bulk(ctx.conn->user());
  } else if (iequals(sub, "CAT") && ctx.args.size() == 2) {
    ctx.reply.write([](resp::Writer& w) {
      w.array_header(5);
      for (const char* c : {"read", "lock", "fence", "admin", "monitor"}) w.bulk(c);
    });
  } else if (iequals(sub, "LIST") && ctx.args.size() == 2) {
    if (!admin) return deny();
    const AclUsers& users = ctx.server.acl();
    ctx.reply.write([&](resp::Writer& w) {
      w.array_header(users.users.size());
      for (const auto& [name, u] : users.users) w.bulk(u.describe());
    });
  } else if (iequals(sub, "LOAD") && ctx.args.size() == 2) {
    if (!admin) return deny();
    if (ctx.server.config().users_file.empty() && ctx.server.config().requirepass_file.empty()) {
      return ctx.reply.error_text("ERR this server has no users file (--users-file) to load");
    }
    Status st = ctx.server.reload_acl();
    if (!st) return ctx.reply.error_text("ERR " + st.message());
    ctx.reply.ok();
  } else {
    ctx.reply.error_text(fmt::format("ERR unknown subcommand or wrong number of arguments for 'acl|{}'",
                                     sub.substr(0, 32)));
  }
}

}  // namespace

void add_auth_commands(std::vector<CommandSpec>& out) {
  out.push_back({"AUTH", -2, kConnection | kFast | kNoAuth, "connection",
                 "Authenticates the connection (as the default user, or as a named user)",
                 "[username] password", &auth, kAclConnection});
  out.push_back({"ACL", -2, kConnection, "connection",
                 "WHOAMI (this connection's user), CAT; LIST and LOAD (admins: the users, reload them)",
                 "WHOAMI | CAT | LIST | LOAD", &acl, kAclConnection});
}

}  // namespace leasehold::server
