// Server: the security glue: the users, certificates and access checks of
// SecurityState (server/security/security_state.h), SIGHUP's reloads, the
// TLS address of a redirect, and the delayed answer to a failed AUTH.
#include <spdlog/spdlog.h>

#include "server/commands/command_table.h"
#include "server/security/acl.h"
#include "server/net/connection.h"
#include "server/server.h"

namespace leasehold::server {
void Server::on_tls_client_certificate(Connection& conn, const std::string& cn) {
  security_.on_tls_client_certificate(conn, cn);
}

Status Server::reload_acl() { return security_.reload_users(); }

std::string Server::primary_for(const std::string& primary, bool tls) const {
  if (!tls || primary.empty()) return primary;
  return cluster_ ? cluster_->primary_tls_address(primary) : std::string();
}

void Server::on_sighup() {
  spdlog::info("SIGHUP: reloading users and certificates");
  (void)security_.reload_users();
  if (cluster_) {
    if (Status st = cluster_->reload_etcd_password(); !st) {
      spdlog::error("etcd password reload failed, keeping the current one error=\"{}\"", st.message());
    } else if (!config_.cluster.etcd_password_file.empty()) {
      spdlog::info("etcd password reloaded (used at the next etcd authentication)");
    }
  }
  security_.reload_tls();
}

const AclUser* Server::user_of(Connection& conn) { return security_.user_of(conn); }

std::string Server::check_access(Connection& conn, const CommandSpec& spec, const std::vector<std::string>& args) {
  return security_.check_access(conn, spec.access(), args, node_->state());
}

void Server::delay_error(Responder reply, std::string text, std::chrono::milliseconds delay) {
  delayed_errors_.answer(std::move(reply), std::move(text), delay);
}

}  // namespace leasehold::server
