#include "server/server.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <csignal>

#include "node/node_factory.h"
#include "server/security/acl.h"
#include "server/net/connection.h"

namespace leasehold::server {
namespace {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

uv_handle_t* as_handle(void* h) { return static_cast<uv_handle_t*>(h); }

std::string_view loss_reason(core::LossReason r) {
  switch (r) {
    case core::LossReason::kExpired: return "expired";
    case core::LossReason::kKilled: return "killed";
    case core::LossReason::kRevoked: return "revoked";
    case core::LossReason::kClosed: return "closed";
    case core::LossReason::kReplaced: return "replaced";
    case core::LossReason::kReleasedByOther: return "released-by-other";
  }
  return "unknown";
}

std::string_view end_reason(core::SessionEndReason r) {
  switch (r) {
    case core::SessionEndReason::kClosed: return "closed";
    case core::SessionEndReason::kExpired: return "expired";
    case core::SessionEndReason::kKilled: return "killed";
  }
  return "unknown";
}

std::string peer_name(uv_tcp_t* tcp) {
  sockaddr_storage addr{};
  int len = sizeof(addr);
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  std::array<char, 64> ip{};
  int port = 0;
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uv_ip6_name(a6, ip.data(), ip.size());
    port = ntohs(a6->sin6_port);
    return fmt::format("[{}]:{}", ip.data(), port);
  }
  const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
  uv_ip4_name(a4, ip.data(), ip.size());
  port = ntohs(a4->sin_port);
  return fmt::format("{}:{}", ip.data(), port);
}

}  // namespace

Server::Server(ServerConfig config) : config_(std::move(config)), read_budget_(config_.read_budget) {}

Server::~Server() {
  if (handles_open_) {
    // start() failed after opening the loop's handles (e.g. the port was
    // taken), so run() never closed them: close them now, while everything
    // they point into is alive, or the loop cannot be closed (and leaks).
    shutting_down_ = true;
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
    return fmt::format("[{}]:{}", config_.listen_host, bound_port_);
  }
  return fmt::format("{}:{}", config_.listen_host, bound_port_);
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
  node_->set_effect_listener([this](const core::Effect& e) { on_effect(e); });
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
  uv_signal_init(&loop_, &sigint_);
  sigint_.data = this;
  uv_signal_init(&loop_, &sigterm_);
  sigterm_.data = this;
  uv_signal_init(&loop_, &sighup_);
  sighup_.data = this;
  uv_async_init(&loop_, &stop_async_, [](uv_async_t* h) {
    static_cast<Server*>(h->data)->begin_shutdown("stop requested");
  });
  stop_async_.data = this;
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
  uv_signal_start(&sigint_, [](uv_signal_t* h, int) { static_cast<Server*>(h->data)->begin_shutdown("SIGINT"); },
                  SIGINT);
  uv_signal_start(&sigterm_, [](uv_signal_t* h, int) { static_cast<Server*>(h->data)->begin_shutdown("SIGTERM"); },
                  SIGTERM);
  uv_signal_start(&sighup_, [](uv_signal_t* h, int) { static_cast<Server*>(h->data)->on_sighup(); }, SIGHUP);
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
  serving_ = true;
  if (!unread_connections_.empty()) {
    spdlog::info("the start's Reopen is applied; reading from {} connections accepted meanwhile",
                 unread_connections_.size());
  }
  std::vector<std::pair<std::uint64_t, std::string>> held = std::move(unread_connections_);
  unread_connections_.clear();
  if (shutting_down_) return;
  for (auto& [id, peer] : held) {
    auto it = connections_.find(id);
    if (it != connections_.end() && !it->second->closed()) it->second->start(std::move(peer));
  }
}

Status Server::bind_listener(uv_tcp_t& handle, bool& initialised, const std::string& host, std::uint16_t port,
                             std::uint16_t& bound_port, uv_connection_cb on_connection) {
  sockaddr_storage addr{};
  int rc = 0;
  if (host.find(':') != std::string::npos) {
    rc = uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr));
  } else {
    rc = uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr));
  }
  if (rc != 0) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("bad listen address {}", host));
  }
  uv_tcp_init(&loop_, &handle);
  handle.data = this;
  initialised = true;  // closed at shutdown from here on
  rc = uv_tcp_bind(&handle, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&handle), 511, on_connection);
  if (rc != 0) {
    // Taken or not ours (in use, not a local address, a privileged port):
    // kUnavailable, like a data dir used by another server.
    return Status(ErrorCode::kUnavailable, fmt::format("cannot listen on {}:{}: {}", host, port, uv_strerror(rc)));
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(&handle, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return Status::ok();
}

Status Server::listen() {
  Status st = bind_listener(listener_, listening_, config_.listen_host, config_.listen_port, bound_port_,
                            [](uv_stream_t* s, int status) {
                              static_cast<Server*>(s->data)->on_new_connection(s, status);
                            });
  if (!st) return st;
  spdlog::info("listening address={} data_dir={}", listen_address(), config_.data_dir);
  if (!security_.tls_context()) return Status::ok();
  st = bind_listener(tls_listener_, tls_listening_, security_.tls_host(), security_.tls_port(), tls_bound_port_, [](uv_stream_t* s, int status) {
    static_cast<Server*>(s->data)->on_new_connection(s, status);
  });
  if (!st) return st;
  spdlog::info("listening tls_address={}:{}", security_.tls_host(), tls_bound_port_);
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
  stop_requested_ = true;
  if (handles_open_) uv_async_send(&stop_async_);
}

void Server::on_new_connection(uv_stream_t* listener, int status) {
  if (status < 0) {
    spdlog::warn("accept failed error=\"{}\"", uv_strerror(status));
    return;
  }
  const bool tls = listener == reinterpret_cast<uv_stream_t*>(&tls_listener_);
  auto conn = std::make_shared<Connection>(*this, next_conn_id_++, tls ? security_.tls_context() : nullptr);
  uv_tcp_init(&loop_, conn->handle());
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(conn->handle())) != 0) {
    connections_.emplace(conn->id(), conn);  // kept until the close callback
    conn->close("accept failed");
    return;
  }
  uv_tcp_nodelay(conn->handle(), 1);
  if (!security_.auth_required()) conn->set_user("default");
  connections_.emplace(conn->id(), conn);
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
  if (!serving_) {
    // Read once the start's Reopen is applied (on_node_opened).
    unread_connections_.emplace_back(conn->id(), peer_name(conn->handle()));
    spdlog::debug("client connected id={} peer={} (read after the start's Reopen)", conn->id(),
                  unread_connections_.back().second);
    return;
  }
  conn->start(peer_name(conn->handle()));
  spdlog::debug("client connected id={} peer={}", conn->id(), conn->peer());
}

std::size_t Server::blocked_client_count() const {
  std::size_t n = 0;
  for (const auto& [id, c] : connections_) n += c->blocked() ? 1 : 0;
  return n;
}

void Server::park_wait(const std::string& lock, core::SessionId session, Responder reply,
                       const std::shared_ptr<Connection>& conn) {
  WaitKey key{lock, session};
  if (!conn || conn->closed()) {
    // The client left before its wait was queued (the enqueue may wait for
    // the next commit: NodeOptions::enqueue_defer): nobody will take a grant.
    reply.null();
    abandon_wait(key);
    return;
  }
  waits_[key].push_back(Parked{conn->id(), std::move(reply)});
  conn->waits().insert(key);
}

void Server::abandon_wait(const WaitKey& key) {
  if (shutting_down_) return;
  // Cancel the queued wait. A grant that lands before the cancel is
  // released again (see on_effect).
  abandoned_.insert(key);
  core::Command cmd;
  cmd.body = core::CancelWait{key.first, key.second};
  node_->propose(std::move(cmd), [this, key](const core::ApplyResult&) { abandoned_.erase(key); });
}

void Server::watch(core::SessionId session, const std::shared_ptr<Connection>& conn) {
  watchers_[session].insert(conn->id());
  conn->watched().insert(session);
}

void Server::speak_for(core::SessionId session, Connection& conn) {
  if (conn.closed()) return;
  auto found = speakers_.find(session);
  if (found == speakers_.end()) {
    if (!node_->state().session(session)) return;  // ended already: nothing to clean up later
    speakers_.try_emplace(session, conn.id());
    return;
  }
  found->second.add(conn.id(), [this](std::uint64_t id) { return !connections_.contains(id); });
}

bool Server::speaks_for(core::SessionId session, const Connection& conn) const {
  if (conn.watched_const().count(session) != 0) return true;
  const auto found = speakers_.find(session);
  return found != speakers_.end() && found->second.contains(conn.id());
}

void Server::on_connection_closing(Connection& conn) {
  for (const WaitKey& key : conn.waits()) {
    auto it = waits_.find(key);
    if (it == waits_.end()) continue;
    auto& list = it->second;
    std::erase_if(list, [&](const Parked& p) { return p.conn_id == conn.id(); });
    if (!list.empty()) continue;
    waits_.erase(it);
    abandon_wait(key);  // nobody waits any more
  }
  conn.waits().clear();
  for (core::SessionId s : conn.watched()) {
    auto it = watchers_.find(s);
    if (it == watchers_.end()) continue;
    it->second.erase(conn.id());
    if (it->second.empty()) watchers_.erase(it);
  }
  conn.watched().clear();
  // Nothing for the sessions it spoke for: see speak_for(). Sessions bound
  // to it with ONCLOSE end after their grace (a shutdown ends none).
  if (!shutting_down_) {
    close_bindings_.connection_closed(conn.id(), [this](core::SessionId s) -> std::optional<std::uint32_t> {
      const auto info = node_->state().session(s);
      return info ? info->close_grace_ms : std::nullopt;
    });
  }
}

void Server::end_closed_session(core::SessionId session) {
  if (shutting_down_) return;
  spdlog::info("session {} ends: its ONCLOSE connection closed and the grace passed", session);
  core::Command cmd;
  cmd.body = core::ConnectionClosed{session};
  node_->propose(std::move(cmd), nullptr);  // not live any more, or not primary: nothing to do
}

void Server::forget_connection(std::uint64_t id) { connections_.erase(id); }


void Server::answer_waiters(const WaitKey& key, const std::function<void(Responder&)>& answer) {
  auto it = waits_.find(key);
  if (it == waits_.end()) return;
  std::vector<Parked> list = std::move(it->second);
  waits_.erase(it);
  for (auto& p : list) {
    auto c = connections_.find(p.conn_id);
    if (c != connections_.end()) c->second->waits().erase(key);
    answer(p.reply);
  }
}

void Server::push_to_watchers(core::SessionId session, const std::string& kind,
                              const std::function<void(resp::Writer&)>& body, std::size_t body_items) {
  auto it = watchers_.find(session);
  if (it == watchers_.end()) return;
  const std::set<std::uint64_t> ids = it->second;  // a push may close a connection
  for (std::uint64_t id : ids) {
    auto c = connections_.find(id);
    if (c == connections_.end() || c->second->protocol() != resp::Protocol::kResp3) continue;
    std::string out;
    resp::Writer w(out, resp::Protocol::kResp3);
    w.push_header(2 + body_items);
    w.bulk("leasehold");
    w.bulk(kind);
    body(w);
    c->second->push(std::move(out));
  }
}

void Server::on_effect(const core::Effect& effect) {
  std::visit(
      Overloaded{
          [&](const core::Granted& g) {
            WaitKey key{g.lock, g.session};
            if (waits_.count(key) != 0) {
              const auto token = static_cast<std::int64_t>(g.token);
              answer_waiters(key, [token](Responder& r) { r.integer(token); });
            } else if (abandoned_.erase(key) != 0) {
              core::Command cmd;
              cmd.body = core::Release{g.lock, g.session, g.token};
              node_->propose(std::move(cmd), nullptr);
            }
          },
          [&](const core::WaitEnded& w) {
            WaitKey key{w.lock, w.session};
            abandoned_.erase(key);
            if (w.reason == core::WaitEndReason::kSessionEnded) {
              answer_waiters(key, [](Responder& r) {
                r.error(Status(ErrorCode::kSessionExpired, "the session ended while waiting"));
              });
            } else {
              answer_waiters(key, [](Responder& r) { r.null(); });
            }
          },
          [&](const core::LockLost& l) {
            const std::string reason(loss_reason(l.reason));
            push_to_watchers(
                l.session, "lost",
                [&](resp::Writer& w) {
                  w.integer(static_cast<std::int64_t>(l.session));
                  w.bulk(l.lock);
                  w.integer(static_cast<std::int64_t>(l.token));
                  w.bulk(reason);
                },
                4);
          },
          [&](const core::SessionEnded& s) {
            close_bindings_.session_ended(s.session);
            const std::string reason(end_reason(s.reason));
            push_to_watchers(
                s.session, "session-ended",
                [&](resp::Writer& w) {
                  w.integer(static_cast<std::int64_t>(s.session));
                  w.bulk(reason);
                },
                2);
            auto it = watchers_.find(s.session);
            if (it != watchers_.end()) {
              for (std::uint64_t id : it->second) {
                auto c = connections_.find(id);
                if (c != connections_.end()) c->second->watched().erase(s.session);
              }
              watchers_.erase(it);
            }
            speakers_.erase(s.session);
          },
          [&](const auto&) {},
      },
      effect);
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
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Connection>> expired;
  for (const auto& [id, c] : connections_) {
    if (c->idle_expired(now, config_.idle_timeout)) expired.push_back(c);
  }
  for (auto& c : expired) {
    spdlog::info("client idle timeout id={} peer={}", c->id(), c->peer());
    c->close("idle timeout");
  }
}

void Server::begin_shutdown(const char* why) {
  if (shutting_down_) return;
  shutting_down_ = true;
  spdlog::info("shutting down reason={}", why);
  close_listeners();
  node_->shutdown([this] { finish_shutdown(); });
}

void Server::close_listeners() {
  if (listening_) {
    uv_close(as_handle(&listener_), nullptr);
    listening_ = false;
  }
  if (tls_listening_) {
    uv_close(as_handle(&tls_listener_), nullptr);
    tls_listening_ = false;
  }
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
  std::vector<std::shared_ptr<Connection>> all;
  for (const auto& [id, c] : connections_) all.push_back(c);
  for (auto& c : all) c->close("server shutdown");
  waits_.clear();
  watchers_.clear();
  if (http_) http_->close();
  speakers_ = {};
  if (handles_open_) {
    handles_open_ = false;
    deferred_pumps_.run();  // from here on connections pump at once (defer_pump)
    uv_close(as_handle(&prepare_), nullptr);
    uv_close(as_handle(&check_), nullptr);
    read_budget_.close();
    node_timer_.close();
    uv_close(as_handle(&idle_timer_), nullptr);
    uv_close(as_handle(&sigint_), nullptr);
    uv_close(as_handle(&sigterm_), nullptr);
    uv_close(as_handle(&sighup_), nullptr);
    delayed_errors_.close();
    close_bindings_.close();
    uv_close(as_handle(&stop_async_), nullptr);
  }
  executor_->close();
}

}  // namespace leasehold::server
