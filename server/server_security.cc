// Server: the security parts (users, access checks, protected mode, the
// delayed answer to a failed AUTH). See server.h and server/security/acl.h.
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include "server/commands/command_table.h"
#include "server/security/acl.h"
#include "server/net/connection.h"
#include "server/server.h"

namespace leasehold::server {
namespace {
uv_handle_t* as_handle(void* h) { return static_cast<uv_handle_t*>(h); }
}  // namespace

Status Server::load_tls() {
  if (config_.tls.listen.empty()) return Status::ok();
  if (Status st = parse_listen(config_.tls.listen, tls_host_, tls_port_); !st) return st;
  auto ctx = TlsContext::load(config_.tls);
  if (!ctx) return ctx.status();
  tls_ctx_ = std::move(ctx).value();
  return Status::ok();
}

void Server::on_tls_client_certificate(Connection& conn, const std::string& cn) {
  const AclUser* u = acl_.find(cn);
  if (u == nullptr || !u->enabled) {
    spdlog::info("client TLS certificate id={} peer={} cn=\"{}\": no such enabled user", conn.id(), conn.peer(),
                 cn.substr(0, 128));
    return;
  }
  conn.set_user(cn);
  spdlog::debug("client authenticated by TLS certificate id={} peer={} user={}", conn.id(), conn.peer(), cn);
}

Status Server::check_protected_mode() const {
  if (!config_.protected_mode || acl_.auth_required()) return Status::ok();
  // A listener is open when it is not on loopback; the TLS one is not open
  // when it requires client certificates (they authenticate the client).
  std::string open_host;
  if (!is_loopback_host(config_.listen_host)) open_host = config_.listen_host;
  std::string tls_host;
  std::uint16_t tls_port = 0;
  if (open_host.empty() && !config_.tls.listen.empty() && config_.tls.auth_clients != TlsClientAuth::kYes &&
      parse_listen(config_.tls.listen, tls_host, tls_port).is_ok() && !is_loopback_host(tls_host)) {
    open_host = tls_host;
  }
  if (open_host.empty()) return Status::ok();
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("protected mode: refusing to listen on {} (not a loopback address) while the "
                            "default user needs no password; anyone who reaches the port could take, "
                            "release and revoke every lock. Give the default user a password "
                            "(--requirepass-file) or declare users (--users-file), or listen on 127.0.0.1, "
                            "or, on a network you trust, pass --protected-mode no",
                            open_host));
}

Status Server::reload_acl() {
  auto users = load_acl(AclFiles{config_.users_file, config_.requirepass_file});
  if (!users) {
    spdlog::error("users reload failed, keeping the current users error=\"{}\"", users.status().message());
    return users.status();
  }
  acl_ = std::move(users).value();
  spdlog::info("users reloaded users={} auth_required={}", acl_.users.size(), acl_.auth_required());
  return Status::ok();
}

std::string Server::primary_for(const std::string& primary, bool tls) const {
  if (!tls || primary.empty()) return primary;
  return cluster_ ? cluster_->primary_tls_address(primary) : std::string();
}

void Server::on_sighup() {
  spdlog::info("SIGHUP: reloading users and certificates");
  (void)reload_acl();
  if (cluster_) {
    if (Status st = cluster_->reload_etcd_password(); !st) {
      spdlog::error("etcd password reload failed, keeping the current one error=\"{}\"", st.message());
    } else if (!config_.cluster.etcd_password_file.empty()) {
      spdlog::info("etcd password reloaded (used at the next etcd authentication)");
    }
  }
  if (!tls_ctx_) return;
  auto ctx = TlsContext::load(config_.tls);
  if (!ctx) {
    spdlog::error("TLS reload failed, keeping the current certificates error=\"{}\"", ctx.status().message());
    return;
  }
  tls_ctx_ = std::move(ctx).value();  // new connections; open ones keep theirs
  spdlog::info("TLS certificates reloaded");
}

const AclUser* Server::user_of(Connection& conn) {
  if (conn.user().empty()) return nullptr;
  const AclUser* u = acl_.find(conn.user());
  if (u == nullptr || !u->enabled) {
    spdlog::info("client user gone id={} peer={} user={}: not authenticated any more", conn.id(), conn.peer(),
                 conn.user());
    conn.set_user({});
    return nullptr;
  }
  return u;
}

std::string Server::check_access(Connection& conn, const CommandSpec& spec, const std::vector<std::string>& args) {
  return server::check_access(user_of(conn), acl_.auth_required(), spec.access(), args, node_->state());
}

void Server::delay_error(Responder reply, std::string text, std::chrono::milliseconds delay) {
  if (!handles_open_) return reply.error_text(text);
  auto* d = new DelayedError{uv_timer_t{}, std::move(reply), std::move(text), this};
  uv_timer_init(&loop_, &d->timer);
  d->timer.data = d;
  delayed_.insert(&d->timer);
  uv_timer_start(
      &d->timer,
      [](uv_timer_t* t) {
        auto* self = static_cast<DelayedError*>(t->data);
        self->server->delayed_.erase(t);
        self->reply.error_text(self->text);
        uv_close(as_handle(t), [](uv_handle_t* h) { delete static_cast<DelayedError*>(h->data); });
      },
      static_cast<std::uint64_t>(delay.count()), 0);
}

}  // namespace leasehold::server
