// server/server.h: the leasehold server: one libuv loop that owns the
// sockets, the node and the state machine.
//
// start() validates the limits (validate_config), opens the node over its
// log (embedded mode: RocksDB in data_dir, recovered there, built by
// node::make_embedded_node in node/node_factory.h; cluster mode:
// joins through cluster::ClusterMember with the log in etcd, as a standby
// until elected), then binds the listener; run() serves (after an unclean
// stop, from the moment the start's Reopen is applied: connections accepted
// before wait unread) until SIGINT/SIGTERM (or request_stop()), then
// stops accepting, lets the node commit what it accepted (node shutdown),
// closes every client and returns. Disk writes happen on the log's thread;
// their completions come back through the loop executor (loop_executor.h).
//
// Its parts, each with its own contract: the client listeners
// (server/net/listener.h), the connections and the gate that holds them
// unread until serving (server/net/connection_registry.h), and the blocking
// waits, watches and pushes (server/services/waits_and_pushes.h), which the
// node's effects and closing connections feed.
//
// Security: users are loaded at start (a bad file fails start()) and on
// SIGHUP / ACL LOAD (a bad file keeps the current users); protected mode
// refuses a non-loopback listener without authentication (docs/security.md).
//
// Thread-safety: everything runs on the loop thread (the one calling run()),
// except request_stop(), which any thread may call.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_member.h"
#include "core/reply.h"
#include "node/node.h"
#include "server/security/acl_user.h"
#include "server/security/security_state.h"
#include "server/base/config.h"
#include "server/data_dir_lock.h"
#include "server/net/deferred_pumps.h"
#include "server/net/read_budget.h"
#include "server/net/loop_executor.h"
#include "server/observability/loop_turn_meter.h"
#include "server/observability/observability.h"
#include "server/http/http_side.h"
#include "server/net/connection_host.h"
#include "server/net/connection_registry.h"
#include "server/net/delayed_errors.h"
#include "server/net/listener.h"
#include "server/services/server_services.h"
#include "server/services/waits_and_pushes.h"
#include "server/net/precise_timer.h"
#include "server/net/responder.h"
#include "server/net/stop_signals.h"
#include "server/net/tls.h"

namespace leasehold::server {

class Connection;
struct CommandSpec;

// The assembly of the rooms below it (docs/server.md, "Rooms"): it serves
// its connections (ConnectionHost, server/net/) and offers the command
// handlers and the HTTP side what they need of it (ServerServices,
// server/services/).
class Server final : public ConnectionHost, public ServerServices {
 public:
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Validates the limits, opens the log and node, binds and listens.
  // Errors: kInvalidArgument (impossible limits), the log's/node's/cluster
  // member's open errors (kIoError, kCorruption, kUnavailable), kIoError
  // "cannot listen on ...".
  // After an unclean stop, connections are accepted at once but read only
  // once run() applied the start's Reopen (Node::when_opened).
  Status start();
  // Serves until stopped; returns after a clean shutdown. Error: the start's
  // Reopen could not be written (the server stopped without serving).
  Status run();
  // Thread-safe and async-signal-unsafe; asks the loop to shut down.
  void request_stop();

  std::uint16_t port() const override { return listener_.port(); }
  std::uint16_t tls_port() const { return tls_listener_.port(); }
  const ServerConfig& config() const override { return config_; }
  node::Node& node() override { return *node_; }
  // Cluster mode: the member (its campaign status for INFO); nullptr embedded.
  const cluster::ClusterMember* cluster() const override { return cluster_.get(); }
  // How long the event loop's turns kept it busy (loop thread).
  const LoopTurnMeter::Stats& loop_turns() const override { return loop_turns_.stats(); }
  bool shutting_down() const override { return shutting_down_; }

  // --- for handlers ---
  void count_command() override { ++counters_.commands_total; }
  void count_read() override { ++counters_.reads_total; }
  void count_write() override { ++counters_.writes_total; }
  // Writes the audit history records buffered so far (HistoryStore::flush).
  // Called before any bytes leave for a client and once per loop turn, so no
  // reply or push precedes the records of the commands it answers.
  void flush_audit_history() override;
  const ServerCounters& counters() const override { return counters_; }
  std::size_t client_count() const override { return connections_.size(); }
  std::size_t blocked_client_count() const override { return connections_.blocked_count(); }
  std::size_t parked_wait_count() const override { return waits_.parked_count(); }
  std::chrono::steady_clock::time_point started_at() const override { return started_at_; }
  std::string listen_address() const override;
  // Metrics and the audit history (server/observability/observability.h).
  Observability& observability() override { return *obs_; }

  // How much of a loop turn goes to parsing requests, and the connections
  // waiting for a later turn (server/net/read_budget.h).
  ReadBudget& read_budget() override { return read_budget_; }
  const ReadBudget& read_budget() const override { return read_budget_; }

  // Pumps `conn` later in this loop phase (server/net/deferred_pumps.h), ahead
  // of the others if `waited` (its blocking request was just answered).
  // False (nothing queued) while the loop's handles are closed: pump it now.
  bool defer_pump(std::weak_ptr<Connection> conn, bool waited) override;

  // Blocking waits, watches and speakers (WaitsAndPushes, whose contract
  // these are). A LOCK.RELEASE from a connection that does not speak for
  // the session is "by another" (the holder gets a `lost` push, reason
  // released-by-other).
  void park_wait(const std::string& lock, core::SessionId session, Responder reply,
                 const std::shared_ptr<Connection>& conn) override {
    waits_.park(lock, session, std::move(reply), conn);
  }
  void watch(core::SessionId session, const std::shared_ptr<Connection>& conn) override { waits_.watch(session, conn); }
  void speak_for(core::SessionId session, Connection& conn) override { waits_.speak_for(session, conn); }
  bool speaks_for(core::SessionId session, const Connection& conn) const override {
    return waits_.speaks_for(session, conn);
  }
  CloseBindings& close_bindings() override { return close_bindings_; }

  // --- security (server/security/acl.h) ---
  const AclUsers& acl() const override { return security_.acl(); }
  std::shared_ptr<TlsContext> http_tls_context() const override { return security_.http_tls_context(); }
  bool auth_required() const override { return security_.auth_required(); }
  // The connection's user in the current table; nullptr when it is not
  // authenticated, or its user was removed or disabled by a reload (the
  // connection is then marked unauthenticated).
  const AclUser* user_of(Connection& conn) override;
  // "" when the connection may run `args` now, else the error to answer.
  std::string check_access(Connection& conn, const CommandSpec& spec, const std::vector<std::string>& args);
  // Re-reads the users and password files; on error keeps the current users.
  Status reload_acl() override;
  // A TLS client presented a verified certificate with subject CN `cn`: the
  // connection becomes that user when it exists and is on.
  void on_tls_client_certificate(Connection& conn, const std::string& cn) override;
  // Where a standby sends a client to the primary whose (plain) address is
  // `primary`: that address for a plain connection; for a TLS one the TLS
  // address the primary advertised in the election, "" if none.
  std::string primary_for(const std::string& primary, bool tls) const override;
  // Answers `reply` with the error `text` after `delay` (a loop timer).
  void delay_error(Responder reply, std::string text, std::chrono::milliseconds delay) override;

  // --- connection glue (ConnectionHost) ---
  // The command table's verdict on a parsed request (server_commands.cc).
  RequestKind classify(const std::vector<std::string>& args) override;
  // check_access, then the read gate or the handler (server_commands.cc).
  void execute(const std::shared_ptr<Connection>& conn, const CommandSpec& spec, const std::vector<std::string>& args,
               Responder reply) override;
  // Ends the connection's waits and watches; starts the close grace of the
  // ONCLOSE sessions bound to it.
  void on_connection_closing(Connection& conn) override;
  void forget_connection(std::uint64_t id) override { connections_.forget(id); }

 private:
  Status listen();
  void on_sighup();
  void on_new_connection(uv_stream_t* listener, int status);
  // The start's Reopen is applied (Node::when_opened): starts reading from
  // the connections accepted meanwhile. A failed Reopen stops the server
  // (run() returns the error).
  void on_node_opened(const Status& outcome);
  // A shard (config_.shards) whose applied state does not record its id and
  // slots yet proposes SetOwnedSlots once, then serves (a standby waits for
  // its primary's record); a log of another shard id stops the server. True
  // when serving waits for that proposal.
  bool record_owned_slots();
  // Starts reading from the connections accepted before serving began.
  void start_serving();
  // Proposes ConnectionClosed for an ONCLOSE session whose grace passed.
  void end_closed_session(core::SessionId session);
  void arm_node_timer();
  void sweep_idle();
  void begin_shutdown(const char* why);
  void finish_shutdown();
  // Closes the client listeners (plain and TLS) if open.
  void close_listeners();
  // Closes the connections, watchers, the HTTP side and every loop handle
  // start() opened; the loop then ends once their close callbacks ran.
  void close_loop_handles();

  ServerConfig config_;
  std::unique_ptr<DataDirLock> data_dir_lock_;  // first: released after everything in the dir is closed
  uv_loop_t loop_{};
  bool loop_initialized_ = false;
  Listener listener_;
  Listener tls_listener_;
  uv_prepare_t prepare_{};
  uv_check_t check_{};
  DeferredPumps deferred_pumps_;  // run from prepare_ and check_
  ReadBudget read_budget_;        // its turn begins in prepare_
  LoopTurnMeter loop_turns_;
  PreciseTimer node_timer_;                  // the node's next timer deadline
  std::optional<node::TimePoint> node_timer_at_;  // what node_timer_ is armed for
  uv_timer_t idle_timer_{};
  StopSignals signals_;  // SIGINT, SIGTERM, SIGHUP, request_stop()
  bool handles_open_ = false;

  node::SteadyClock clock_;
  std::unique_ptr<LoopExecutor> executor_;
  std::unique_ptr<Observability> obs_;  // outlives node_ (the log's fsync hook uses its metrics)
  std::unique_ptr<HttpSide> http_;      // the operations HTTP listener (--http-listen)
  std::unique_ptr<node::Node> node_;
  std::unique_ptr<cluster::ClusterMember> cluster_;  // cluster mode; destroyed before node_

  Status run_error_;  // what run() returns (the start's Reopen failed)

  // Not serving until the start's Reopen is applied (on_node_opened):
  // connections are accepted but not read, so that no reply shows the state
  // from before an unclean stop (sessions the Reopen expires).
  ConnectionRegistry connections_;
  WaitsAndPushes waits_{connections_};
  SecurityState security_{config_};  // users, TLS certificates, access checks
  DelayedErrors delayed_errors_;  // delay_error()
  CloseBindings close_bindings_;  // ONCLOSE sessions (end_closed_session())

  bool shutting_down_ = false;
  ServerCounters counters_;
  std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
};

}  // namespace leasehold::server
