#include "server/security/security_state.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

namespace leasehold::server {

Status SecurityState::load() {
  auto users = load_acl(AclFiles{config_.users_file, config_.requirepass_file});
  if (!users) return users.status();
  acl_ = std::move(users).value();
  if (Status st = check_protected_mode(); !st) return st;
  if (Status st = check_http_protected_mode(); !st) return st;
  return load_tls();
}

namespace {

// The HTTP listener's TLS options: the RESP listener's certificate and key;
// clients authenticate by Basic or a bearer token, not by certificate.
TlsOptions http_tls_options(const TlsOptions& resp) {
  TlsOptions o = resp;
  o.auth_clients = TlsClientAuth::kNo;
  return o;
}

}  // namespace

Status SecurityState::load_tls() {
  if (config_.http_tls) {
    auto ctx = TlsContext::load(http_tls_options(config_.tls));
    if (!ctx) return Status(ErrorCode::kInvalidArgument, "--http-tls: " + ctx.status().message());
    http_tls_ctx_ = std::move(ctx).value();
  }
  if (config_.tls.listen.empty()) return Status::ok();
  if (Status st = parse_listen(config_.tls.listen, tls_host_, tls_port_); !st) return st;
  auto ctx = TlsContext::load(config_.tls);
  if (!ctx) return ctx.status();
  tls_ctx_ = std::move(ctx).value();
  return Status::ok();
}

void SecurityState::on_tls_client_certificate(Connection& conn, const std::string& cn) {
  const AclUser* u = acl_.find(cn);
  if (u == nullptr || !u->enabled) {
    spdlog::info("client TLS certificate id={} peer={} cn=\"{}\": no such enabled user", conn.id(), conn.peer(),
                 cn.substr(0, 128));
    return;
  }
  conn.set_user(cn);
  spdlog::debug("client authenticated by TLS certificate id={} peer={} user={}", conn.id(), conn.peer(), cn);
}

Status SecurityState::check_protected_mode() const {
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

Status SecurityState::check_http_protected_mode() const {
  if (config_.http_listen.empty()) return Status::ok();
  std::string host;
  std::uint16_t port = 0;
  if (!parse_listen(config_.http_listen, host, port).is_ok() || is_loopback_host(host)) return Status::ok();
  if (config_.http_auth == HttpAuth::kNone) {
    spdlog::warn("HTTP WITHOUT AUTHENTICATION: --http-auth none on {} (not a loopback address): anyone who "
                 "reaches the port reads every lock name, owner and session id (/api, /metrics, the "
                 "dashboard). Drop --http-auth none to require a user with +@monitor",
                 config_.http_listen);
    return Status::ok();
  }
  if (acl_.auth_required()) return Status::ok();
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("protected mode: refusing to listen for HTTP on {} (not a loopback address) while "
                            "the default user needs no password; anyone who reaches the port could read every "
                            "lock name, owner and session id. Give the default user a password "
                            "(--requirepass-file) or declare users (--users-file), or listen on 127.0.0.1, "
                            "or, on a network you trust, pass --http-auth none",
                            host));
}

Status SecurityState::reload_users() {
  auto users = load_acl(AclFiles{config_.users_file, config_.requirepass_file});
  if (!users) {
    spdlog::error("users reload failed, keeping the current users error=\"{}\"", users.status().message());
    return users.status();
  }
  acl_ = std::move(users).value();
  spdlog::info("users reloaded users={} auth_required={}", acl_.users.size(), acl_.auth_required());
  return Status::ok();
}

void SecurityState::reload_tls() {
  if (http_tls_ctx_) {
    auto ctx = TlsContext::load(http_tls_options(config_.tls));
    if (!ctx) {
      spdlog::error("HTTP TLS reload failed, keeping the current certificates error=\"{}\"",
                    ctx.status().message());
    } else {
      http_tls_ctx_ = std::move(ctx).value();
      spdlog::info("HTTP TLS certificates reloaded");
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

const AclUser* SecurityState::user_of(Connection& conn) {
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

std::string SecurityState::check_access(Connection& conn, const CommandAccess& command,
                                        const std::vector<std::string>& args, const core::StateMachine& state) {
  return server::check_access(user_of(conn), acl_.auth_required(), command, args, state);
}

}  // namespace leasehold::server
