// server/net/connection_host.h: what a Connection asks of the server that
// owns it. The net room is below the rooms that decide what a request means
// (commands, security) and below the server assembly; a connection reaches
// them only through this interface, which the Server implements.
//
// Every call happens on the loop thread, from inside the connection's own
// callbacks. The host outlives its connections (it closes them at shutdown
// and their close callbacks end with forget_connection()).
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/base/config.h"
#include "server/net/responder.h"

namespace leasehold::server {

class Connection;
class ReadBudget;
struct CommandSpec;  // opaque here: the host's command table (server/commands/)

// How the host classified a parsed request (ConnectionHost::classify).
struct RequestKind {
  const CommandSpec* spec = nullptr;  // nullptr: `error` is the whole reply
  std::string error;                  // "ERR unknown command ..." / wrong number of arguments
  bool write = false;                 // may start behind uncommitted writes
  bool blocking = false;              // a barrier for pipelining (LOCK.ACQUIRE ... WAIT)
  bool no_auth = false;               // runs before authentication (AUTH, HELLO, QUIT)
};

class ConnectionHost {
 public:
  // The limits (protocol, max_pipeline, max_pipeline_bytes, max_output_bytes).
  virtual const ServerConfig& config() const = 0;
  // True while a connection without a user must authenticate first.
  virtual bool auth_required() const = 0;
  // Looks the request's name and arity up.
  virtual RequestKind classify(const std::vector<std::string>& args) = 0;
  // Runs a request that classify() accepted: access check, then its handler
  // (or the read gate); answers through `reply`, now or later.
  virtual void execute(const std::shared_ptr<Connection>& conn, const CommandSpec& spec,
                       const std::vector<std::string>& args, Responder reply) = 0;
  // A TLS client presented a verified certificate with subject CN `cn`.
  virtual void on_tls_client_certificate(Connection& conn, const std::string& cn) = 0;
  // Where a redirect to the primary `primary` sends a client (server.h).
  virtual std::string primary_for(const std::string& primary, bool tls) const = 0;
  // Writes the audit records buffered so far; called before bytes leave.
  virtual void flush_audit_history() = 0;
  // This loop's read budget (server/net/read_budget.h).
  virtual ReadBudget& read_budget() = 0;
  // Pumps `conn` later in this loop phase; false: pump it now.
  virtual bool defer_pump(std::weak_ptr<Connection> conn, bool waited) = 0;
  virtual void count_command() = 0;
  virtual void count_read() = 0;
  virtual void count_write() = 0;
  // The connection starts closing (its watches and waits end).
  virtual void on_connection_closing(Connection& conn) = 0;
  // libuv closed the connection's handle: the host drops its reference.
  virtual void forget_connection(std::uint64_t id) = 0;

 protected:
  ~ConnectionHost() = default;
};

}  // namespace leasehold::server
