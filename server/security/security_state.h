// server/security/security_state.h: one server's security state: the user
// table (--users-file, --requirepass-file), the TLS listener's address and
// its current certificates, and the decisions made with them (which user a
// connection is, whether it may run a command, protected mode).
//
// load() at start: a bad users file, a bad certificate or a listener that
// protected mode refuses fails the start. reload_users() / reload_tls() on
// SIGHUP and ACL LOAD: a bad file keeps what is loaded (docs/security.md).
// Open TLS connections keep the context they started with; new ones get
// tls_context().
//
// Ownership: the Server owns it. Thread-safety: loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/state_machine.h"
#include "leasehold/status.h"
#include "server/base/config.h"
#include "server/net/connection.h"
#include "server/net/tls.h"
#include "server/security/acl.h"
#include "server/security/acl_user.h"
#include "server/security/command_access.h"

namespace leasehold::server {

class SecurityState {
 public:
  // `config` outlives this object.
  explicit SecurityState(const ServerConfig& config) : config_(config) {}
  SecurityState(const SecurityState&) = delete;
  SecurityState& operator=(const SecurityState&) = delete;

  // Loads the users, checks protected mode (the RESP listeners, and the HTTP
  // listener unless --http-auth none, which is warned about instead), parses
  // --tls-listen and loads the certificates (no TLS: nothing; --http-tls: a
  // second context for HTTP). Errors: load_acl()'s, kInvalidArgument
  // (protected mode, a bad --tls-listen), TlsContext::load()'s.
  Status load();
  // Re-reads the users and password files; on error keeps the current users.
  Status reload_users();
  // Reloads the certificates (TLS on); on error keeps the current ones.
  void reload_tls();

  const AclUsers& acl() const { return acl_; }
  bool auth_required() const { return acl_.auth_required(); }
  // The connection's user in the current table; nullptr when it is not
  // authenticated, or its user was removed or disabled by a reload (the
  // connection is then marked unauthenticated).
  const AclUser* user_of(Connection& conn);
  // "" when the connection may run `args` now, else the error to answer.
  std::string check_access(Connection& conn, const CommandAccess& command, const std::vector<std::string>& args,
                           const core::StateMachine& state);
  // A TLS client presented a verified certificate with subject CN `cn`: the
  // connection becomes that user when it exists and is on.
  void on_tls_client_certificate(Connection& conn, const std::string& cn);

  // The TLS listener: its host and port (--tls-listen) and the context new
  // connections get; nullptr without TLS.
  const std::string& tls_host() const { return tls_host_; }
  std::uint16_t tls_port() const { return tls_port_; }
  const std::shared_ptr<TlsContext>& tls_context() const { return tls_ctx_; }
  // The HTTP listener's context (--http-tls: the same certificate and key,
  // no client certificates); nullptr without --http-tls.
  const std::shared_ptr<TlsContext>& http_tls_context() const { return http_tls_ctx_; }

 private:
  Status check_protected_mode() const;
  Status check_http_protected_mode() const;
  Status load_tls();

  const ServerConfig& config_;
  AclUsers acl_;
  std::string tls_host_;
  std::uint16_t tls_port_ = 0;
  std::shared_ptr<TlsContext> tls_ctx_;  // new connections' context (replaced on SIGHUP)
  std::shared_ptr<TlsContext> http_tls_ctx_;  // the same for the HTTP listener (--http-tls)
};

}  // namespace leasehold::server
