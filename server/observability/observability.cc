#include "server/observability/observability.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>


namespace leasehold::server {
namespace {

std::int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Observability::Observability(ObservedServer& server) : server_(server) {}
Observability::~Observability() = default;

Status Observability::open_history() {
  HistoryOptions options;
  options.path = server_.config().data_dir + "/history.log";
  options.max_entries = std::max<std::size_t>(1, server_.config().history_max_entries);
  auto store = HistoryStore::open(options);
  if (!store) return store.status();
  history_ = std::move(store).value();
  if (history_->dropped_at_open() != 0) {
    spdlog::warn("history: cut a torn or corrupt tail file={}", options.path);
  }
  spdlog::info("history opened file={} entries={} max_entries={}", options.path, history_->size(),
               options.max_entries);
  return Status::ok();
}

void Observability::attach(node::Node& node, bool cluster) {
  deriver_.reset(node.state());
  for (const core::LockInfo& lock : node.state().locks("", SIZE_MAX)) last_token_ = std::max(last_token_, lock.last_token);
  node::NodeObserver observer;
  observer.applied = [this](log::LogIndex index, const core::Command& command, const core::ApplyResult& result) {
    on_applied(index, command, result);
  };
  observer.committed = [this, cluster](std::size_t commands, std::chrono::steady_clock::duration latency, bool ok) {
    metrics_.observe_commit(commands, latency, ok, cluster);
  };
  node.set_observer(std::move(observer));
}

void Observability::note_requester(const std::string& key, std::string who) {
  if (requesters_.size() > 10'000) requesters_.clear();  // bounded: stale notes of failed proposals
  requesters_[key] = std::move(who);
}

void Observability::on_applied(log::LogIndex index, const core::Command& command, const core::ApplyResult& result) {
  applied_window_.add(std::chrono::steady_clock::now(), static_cast<double>(index));
  std::vector<AuditEvent>& events = events_;
  deriver_.derive_into(command, result, server_.node().state(), events);
  if (events.empty()) return;
  std::string who;
  if (const auto* r = std::get_if<core::Revoke>(&command.body)) {
    if (auto it = requesters_.find(revoke_key(r->lock)); it != requesters_.end()) {
      who = std::move(it->second);
      requesters_.erase(it);
    }
  } else if (const auto* k = std::get_if<core::KillSession>(&command.body)) {
    if (auto it = requesters_.find(kill_key(k->session)); it != requesters_.end()) {
      who = std::move(it->second);
      requesters_.erase(it);
    }
  }
  const std::int64_t wall = wall_now_ms();
  for (AuditEvent& e : events) {
    const bool operator_action = e.kind == AuditKind::kRevoke || e.kind == AuditKind::kKill;
    if (operator_action && !who.empty()) e.reason += " by " + who;
    if (operator_action) {
      spdlog::info("audit {} lock=\"{}\" session={} owner=\"{}\" token={} reason=\"{}\"", audit_kind_name(e.kind),
                   e.lock, e.session, e.owner, e.token, e.reason);
    }
    if (e.kind == AuditKind::kGrant) last_token_ = std::max(last_token_, e.token);
    metrics_.record(e);
    if (history_) history_->append(wall, index, command.now, std::move(e));
  }
}

MetricsView Observability::view() const {
  node::Node& node = server_.node();
  const node::NodeStats st = node.stats();
  const core::StateMachine& sm = node.state();
  MetricsView v;
  v.primary = st.role == node::Role::kPrimary;
  v.cluster = server_.config().cluster.enabled();
  v.node_failed = !st.failure.is_ok();
  v.sessions = sm.session_count();
  v.locks = sm.lock_count();
  v.revision = st.applied_revision;
  v.applied_index = st.applied_index;
  v.log_last_index = st.log.last;
  v.pending_proposals = st.pending_proposals;
  v.catch_ups = st.catch_up_recoveries;
  v.promotions = st.promotions;
  v.step_downs = st.step_downs;
  v.connected_clients = server_.client_count();
  v.long_hold_threshold_seconds = static_cast<double>(server_.config().long_hold.count()) / 1000.0;
  if (history_) {
    v.history_entries = history_->size();
    v.history_write_errors = history_->write_errors();
  }
  // One pass over the locks without copying them (no listing, no sort).
  const auto long_hold = static_cast<core::LogMillis>(server_.config().long_hold.count());
  const core::LockStats locks = sm.lock_stats(node.log_now(), long_hold);
  v.waiters = sm.waiter_count();
  v.longest_queue = locks.longest_queue;
  v.long_held_locks = locks.long_holds;
  v.last_token = std::max<std::uint64_t>(locks.last_token, last_token_);
  v.oldest_hold_seconds = static_cast<double>(locks.oldest_hold_ms) / 1000.0;
  return v;
}

}  // namespace leasehold::server
