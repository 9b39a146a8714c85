// server/server.cc: the Server (server/server.h): start (the node, the loop's
// handles, the listeners), run, accepting connections, the node's timer, the
// idle sweep and shutdown.
#include "server/server.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include "node/node_factory.h"
#include "server/security/acl.h"
#include "server/net/connection.h"

namespace leasehold::server {
namespace {

uv_handle_t* as_handle(void* h) { return static_cast<uv_handle_t*>(h); }

}  // namespace

Server::Server(ServerConfig config) : config_(std::move(config)), read_budget_(config_.read_budget) {}

Server::~Server() {
  if (handles_open_) {
    // start() failed after opening the loop's handles (e.g. the port was
    // taken), so run() never closed them: close them now, while everything
    // they point into is alive, or the loop cannot be closed (and leaks).
    shutting_down_ = true;
    waits_.stop_cancelling();
    close_listeners();
    close_loop_handles();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  if (http_) http_->close();
  connections_.clear();
  cluster_.reset();
  node_.reset();
  executor_.reset();
  if (loop_initialized_) {
    uv_run(&loop_, UV_RUN_NOWAIT);
    uv_loop_close(&loop_);
  }
}

std::string Server::listen_address() const {
  if (config_.listen_host.find(':') != std::string::npos) {
    return fmt::format("[{}]:{}", config_.listen_host, listener_.port());
  }
  return fmt::format("{}:{}", config_.listen_host, listener_.port());
}

Status Server::start() {
  if (Status valid = validate_config(config_); !valid) return valid;
  auto dir_lock = DataDirLock::acquire(config_.data_dir);
  if (!dir_lock) return dir_lock.status();
  data_dir_lock_ = std::move(dir_lock).value();
  if (Status st = security_.load(); !st) return st;  // users, protected mode, TLS certificates
  if (uv_loop_init(&loop_) != 0) return Status(ErrorCode::kIoError, "cannot create the event loop");
  loop_initialized_ = true;
  if (Status st = LoopTurnMeter::enable(&loop_); !st) return st;
  auto executor = LoopExecutor::open(&loop_);
  if (!executor) return executor.status();
  executor_ = std::move(executor).value();
  obs_ = std::make_unique<Observability>(*this);
  http_ = std::make_unique<HttpSide>(*this);
  loop_turns_ = LoopTurnMeter([m = &obs_->metrics()](double seconds) { m->observe_loop_turn(seconds); });

  if (config_.cluster.enabled()) {
    cluster::ClusterOptions co = config_.cluster;
    if (co.data_dir.empty()) co.data_dir = config_.data_dir;
    auto member = cluster::ClusterMember::start(co, config_.node, clock_, executor_->executor(),
                                                [this](const Status&) { begin_shutdown("cluster failure"); });
    if (!member) return member.status();
    cluster_ = std::move(member).value();
    node_ = cluster_->take_node();
  } else {
    node::EmbeddedNodeOptions options;
    options.data_dir = config_.data_dir;
    options.node = config_.node;
    options.recover_lost_log = config_.recover_lost_log;
    options.revision_floor = config_.revision_floor;
    options.revision_block = config_.revision_block;
    options.on_synced_write = [m = &obs_->metrics()](auto d) { m->observe_fsync(d); };
    options.on_log_opened = [](std::string_view description) {
      spdlog::info("log opened backend=\"{}\"", description);
    };
    auto node = node::make_embedded_node(std::move(options), clock_, executor_->executor());
    if (!node) return node.status();
    node_ = std::move(node).value();
    for (const std::string& notice : node_->start_notices()) spdlog::warn("revision record: {}", notice);
  }
  waits_.attach(*node_);
  node_->set_effect_listener([this](const core::Effect& e) {
    if (const auto* ended = std::get_if<core::SessionEnded>(&e)) close_bindings_.session_ended(ended->session);
    waits_.on_effect(e);
  });
  if (Status st = obs_->open_history(); !st) return st;
  obs_->attach(*node_, config_.cluster.enabled());
  const node::NodeStats stats = node_->stats();
  spdlog::info("node recovered revision={} applied_index={} replayed_entries={} sessions={} locks={}",
               stats.applied_revision, stats.applied_index, stats.replayed_entries,
               node_->state().session_count(), node_->state().lock_count());

  // First, so that its failure leaves no other handle open.
  if (Status st = node_timer_.open(&loop_, [this] {
        node_timer_at_.reset();
        if (node_ && !shutting_down_) node_->run_due_timers();
      });
      !st) {
    return st;
  }
  uv_prepare_init(&loop_, &prepare_);
  prepare_.data = this;
  uv_check_init(&loop_, &check_);
  check_.data = this;
  uv_timer_init(&loop_, &idle_timer_);
  idle_timer_.data = this;
  signals_.open(&loop_, [this](const char* why) { begin_shutdown(why); }, [this] { on_sighup(); });
  read_budget_.open(&loop_);
  delayed_errors_.open(&loop_);
  close_bindings_.open(&loop_, [this](core::SessionId s) { end_closed_session(s); });
  handles_open_ = true;

  uv_prepare_start(&prepare_, [](uv_prepare_t* h) {
    auto* self = static_cast<Server*>(h->data);
    self->deferred_pumps_.run();  // what timers, pending callbacks and closes answered
    self->flush_audit_history();  // what was applied without a reply (a standby, expiries)
    self->loop_turns_.on_turn(&self->loop_);
    self->read_budget_.new_turn();
    self->arm_node_timer();
  });
  uv_check_start(&check_, [](uv_check_t* h) {
    static_cast<Server*>(h->data)->deferred_pumps_.run();  // what this poll's callbacks answered
  });
  uv_timer_start(&idle_timer_, [](uv_timer_t* h) { static_cast<Server*>(h->data)->sweep_idle(); }, 500, 500);
  if (Status st = listen(); !st) return st;
  if (Status st = http_->start(&loop_); !st) return st;
  node_->when_opened([this](const Status& outcome) { on_node_opened(outcome); });
  return Status::ok();
}

void Server::on_node_opened(const Status& outcome) {
  if (!outcome) {
    run_error_ = Status(outcome.code(), "cannot start serving: " + outcome.message());
    begin_shutdown("the start's Reopen failed");
    return;
  }
  if (record_owned_slots()) return;  // serving starts once the record is applied
  start_serving();
}

bool Server::record_owned_slots() {
  const slots::ShardMap& map = config_.shards;
  if (!map.enabled()) return false;
  const slots::ShardAddress& self = map.self();
  const core::StateMachine& state = node_->state();
  if (state.shard() == self.id && state.owned_slots() == self.slots) return false;
  if (state.shard() != 0 && state.shard() != self.id) {
    run_error_ = Status(ErrorCode::kInvalidArgument,
                        fmt::format("--shard-id {}: the data dir {} is shard {}'s (a shard keeps its id: its "
                                    "session ids carry it)",
                                    self.id, config_.data_dir, state.shard()));
    begin_shutdown("the data dir is another shard's");
    return true;
  }
  if (node_->role() != node::Role::kPrimary) return false;  // the primary records it
  spdlog::info("recording this shard's slots shard_id={} slots={} (the log had shard_id={} slots={})", self.id,
               self.slots.describe(), state.shard(), state.owned_slots().describe());
  core::Command command;
  command.body = core::SetOwnedSlots{self.slots.ranges(), self.id};
  node_->propose(std::move(command), [this](const core::ApplyResult& result) {
    if (result.reply.is_error()) {
      run_error_ = Status(result.reply.error.code(), "cannot record this shard's slots: " +
                                                         result.reply.error.message());
      begin_shutdown("the shard's slots could not be recorded");
      return;
    }
    start_serving();
  });
  return true;
}

void Server::start_serving() {
  std::vector<std::pair<std::uint64_t, std::string>> held = connections_.start_serving();
  if (!held.empty()) {
    spdlog::info("the start's Reopen is applied; reading from {} connections accepted meanwhile", held.size());
  }
  if (shutting_down_) return;
  for (auto& [id, peer] : held) {
    Connection* conn = connections_.find(id);
    if (conn != nullptr && !conn->closed()) conn->start(std::move(peer));
  }
}

Status Server::listen() {
  const auto on_connection = [this](uv_stream_t* s, int status) { on_new_connection(s, status); };
  Status st = listener_.open(&loop_, config_.listen_host, config_.listen_port, on_connection);
  if (!st) return st;
  spdlog::info("listening address={} data_dir={}", listen_address(), config_.data_dir);
  if (!security_.tls_context()) return Status::ok();
  st = tls_listener_.open(&loop_, security_.tls_host(), security_.tls_port(), on_connection);
  if (!st) return st;
  spdlog::info("listening tls_address={}:{}", security_.tls_host(), tls_listener_.port());
  return Status::ok();
}

Status Server::run() {
  if (!handles_open_) return Status(ErrorCode::kInternal, "run() before a successful start()");
  uv_run(&loop_, UV_RUN_DEFAULT);
  // Every handle is closed; destroy the node (and its log) on this thread.
  cluster_.reset();  // stops following/campaigning, revokes the election lease
  node_.reset();
  executor_.reset();
  uv_run(&loop_, UV_RUN_DEFAULT);
  spdlog::info("server stopped");
  return run_error_;
}

void Server::request_stop() {
  signals_.request_stop();
}

void Server::on_new_connection(uv_stream_t* listener, int status) {
  if (status < 0) {
    spdlog::warn("accept failed error=\"{}\"", uv_strerror(status));
    return;
  }
  const bool tls = tls_listener_.is(listener);
  auto conn = std::make_shared<Connection>(*this, connections_.next_id(), tls ? security_.tls_context() : nullptr);
  uv_tcp_init(&loop_, conn->handle());
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(conn->handle())) != 0) {
    connections_.add(conn);  // kept until the close callback
    conn->close("accept failed");
    return;
  }
  uv_tcp_nodelay(conn->handle(), 1);
  if (!security_.auth_required()) conn->set_user("default");
  connections_.add(conn);
  ++counters_.connections_total;
  if (shutting_down_ || connections_.size() > config_.max_clients) {
    ++counters_.connections_rejected;
    std::string out;
    resp::Writer(out, resp::Protocol::kResp2)
        .error(shutting_down_ ? "UNAVAILABLE shutting down" : "ERR max number of clients reached");
    conn->close_after_replies();  // reads nothing, closes after this error
    conn->start(peer_name(conn->handle()));
    conn->push(std::move(out));
    return;
  }
  if (!connections_.serving()) {
    // Read once the start's Reopen is applied (on_node_opened).
    connections_.hold_unread(conn->id(), peer_name(conn->handle()));
    spdlog::debug("client connected id={} peer={} (read after the start's Reopen)", conn->id(),
                  connections_.last_held_peer());
    return;
  }
  conn->start(peer_name(conn->handle()));
  spdlog::debug("client connected id={} peer={}", conn->id(), conn->peer());
}

void Server::on_connection_closing(Connection& conn) {
  waits_.connection_closing(conn);
  // Sessions bound to it with ONCLOSE end after their grace when the peer
  // closed it; a close of ours (or a shutdown) ends none.
  if (!shutting_down_) {
    close_bindings_.connection_closed(conn.id(), conn.closed_by_peer(), [this](core::SessionId s) -> std::optional<std::uint32_t> {
      const auto info = node_->state().session(s);
      return info ? info->close_grace_ms : std::nullopt;
    });
  }
}

void Server::end_closed_session(core::SessionId session) {
  if (shutting_down_) {
    close_bindings_.end_failed(session);
    return;
  }
  spdlog::info("session {} ends: its ONCLOSE connection closed and the grace passed", session);
  core::Command cmd;
  cmd.body = core::ConnectionClosed{session};
  // Not live any more, or not primary: nothing to do but let keepalives in again.
  node_->propose(std::move(cmd), [this, session](const core::ApplyResult& r) {
    if (r.reply.is_error()) close_bindings_.end_failed(session);
  });
}

void Server::arm_node_timer() {
  if (!node_ || shutting_down_) return;
  const auto deadline = node_->next_timer_deadline();
  if (!deadline) {
    if (node_timer_at_) node_timer_.disarm();
    node_timer_at_.reset();
    return;
  }
  // Re-armed (a syscall) only for an earlier deadline. When it moved later
  // (e.g. a keepalive), the armed expiry fires early and harmlessly:
  // run_due_timers() takes only what is due, and the next iteration arms
  // the new deadline.
  if (node_timer_at_ && *node_timer_at_ <= *deadline) return;
  node_timer_at_ = deadline;
  node_timer_.arm(*deadline - clock_.now());
}

void Server::sweep_idle() {
  for (auto& c : connections_.idle_expired(std::chrono::steady_clock::now(), config_.idle_timeout)) {
    spdlog::info("client idle timeout id={} peer={}", c->id(), c->peer());
    c->close("idle timeout");
  }
}

void Server::begin_shutdown(const char* why) {
  if (shutting_down_) return;
  shutting_down_ = true;
  waits_.stop_cancelling();
  spdlog::info("shutting down reason={}", why);
  close_listeners();
  node_->shutdown([this] { finish_shutdown(); });
}

void Server::close_listeners() {
  listener_.close();
  tls_listener_.close();
}

void Server::finish_shutdown() {
  close_loop_handles();
  spdlog::info("node flushed; closing");
}

void Server::flush_audit_history() {
  if (obs_) obs_->flush_history();
}

bool Server::defer_pump(std::weak_ptr<Connection> conn, bool waited) {
  if (!handles_open_) return false;
  deferred_pumps_.add(std::move(conn), waited);
  return true;
}

void Server::close_loop_handles() {
  deferred_pumps_.run();  // replies already filled go out before the connections close
  for (auto& c : connections_.all()) c->close("server shutdown");
  waits_.clear();
  if (http_) http_->close();
  if (handles_open_) {
    handles_open_ = false;
    deferred_pumps_.run();  // from here on connections pump at once (defer_pump)
    uv_close(as_handle(&prepare_), nullptr);
    uv_close(as_handle(&check_), nullptr);
    read_budget_.close();
    node_timer_.close();
    uv_close(as_handle(&idle_timer_), nullptr);
    signals_.close();
    delayed_errors_.close();
    close_bindings_.close();
  }
  executor_->close();
}

}  // namespace leasehold::server
