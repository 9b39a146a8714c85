// server/services/server_services.h: what the running server offers the
// rooms above it (the command handlers in server/commands/ and the HTTP
// side in server/http/). The Server (server/server.h) implements it; those
// rooms see only this interface, so none of them includes the server
// assembly. Each method's contract is the Server's (server/server.h).
//
// Thread-safety: loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cluster/cluster_member.h"
#include "core/types.h"
#include "node/node.h"
#include "server/base/config.h"
#include "server/net/close_bindings.h"
#include "server/net/connection.h"
#include "server/net/read_budget.h"
#include "server/net/responder.h"
#include "server/observability/loop_turn_meter.h"
#include "server/observability/observability.h"
#include "server/security/acl_user.h"

namespace leasehold::server {

struct ServerCounters {
  std::uint64_t connections_total = 0;
  std::uint64_t connections_rejected = 0;
  std::uint64_t commands_total = 0;
  std::uint64_t reads_total = 0;   // read callbacks that brought bytes
  std::uint64_t writes_total = 0;  // writes handed to the socket (uv_try_write / uv_write)
};

class ServerServices : public ObservedServer {
 public:
  // --- what the server is ---
  const ServerConfig& config() const override = 0;
  node::Node& node() override = 0;
  // Cluster mode: the member (its campaign status for INFO); nullptr embedded.
  virtual const cluster::ClusterMember* cluster() const = 0;
  virtual std::uint16_t port() const = 0;
  virtual std::string listen_address() const = 0;
  virtual std::chrono::steady_clock::time_point started_at() const = 0;
  virtual bool shutting_down() const = 0;

  // --- statistics (INFO, /api/status) ---
  virtual const ServerCounters& counters() const = 0;
  std::size_t client_count() const override = 0;
  virtual std::size_t blocked_client_count() const = 0;
  virtual std::size_t parked_wait_count() const = 0;
  virtual const LoopTurnMeter::Stats& loop_turns() const = 0;
  virtual const ReadBudget& read_budget() const = 0;
  // Metrics and the audit history (server/observability/observability.h).
  virtual Observability& observability() = 0;

  // --- blocking waits, watches and who speaks for a session ---
  virtual void park_wait(const std::string& lock, core::SessionId session, Responder reply,
                         const std::shared_ptr<Connection>& conn) = 0;
  virtual void watch(core::SessionId session, const std::shared_ptr<Connection>& conn) = 0;
  virtual void speak_for(core::SessionId session, Connection& conn) = 0;
  virtual bool speaks_for(core::SessionId session, const Connection& conn) const = 0;
  // ONCLOSE sessions' connection bindings (server/net/close_bindings.h).
  virtual CloseBindings& close_bindings() = 0;

  // --- security ---
  virtual const AclUsers& acl() const = 0;
  // The HTTP listener's TLS context (--http-tls; replaced on SIGHUP); nullptr
  // without --http-tls.
  virtual std::shared_ptr<TlsContext> http_tls_context() const = 0;
  virtual const AclUser* user_of(Connection& conn) = 0;
  virtual Status reload_acl() = 0;
  virtual std::string primary_for(const std::string& primary, bool tls) const = 0;
  virtual void delay_error(Responder reply, std::string text, std::chrono::milliseconds delay) = 0;

 protected:
  ~ServerServices() = default;
};

}  // namespace leasehold::server
