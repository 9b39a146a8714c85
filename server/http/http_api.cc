#include "server/http/http_api.h"

#include <nlohmann/json.hpp>

#include <chrono>

#include "server/observability/observability.h"
#include "server/services/server_services.h"

namespace leasehold::server {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// j[key] (invalid UTF-8 becomes U+FFFD at dump), j[key + "_b64"] and, for
// bytes that are not UTF-8, j[key + "_binary"].
void put_name(json& j, const std::string& name, const std::string& key = "name") {
  j[key] = name;
  j[key + "_b64"] = base64_encode(name);
  if (!is_valid_utf8(name)) j[key + "_binary"] = true;
}

std::int64_t age(core::LogMillis now, core::LogMillis then) {
  return now > then ? static_cast<std::int64_t>(now - then) : 0;
}

std::string_view mode_name(core::LockMode mode) {
  switch (mode) {
    case core::LockMode::kExclusive: return "exclusive";
    case core::LockMode::kShared: return "shared";
    case core::LockMode::kSemaphore: return "semaphore";
  }
  return "unknown";
}

json lock_json(const core::LockInfo& lock, core::LogMillis now) {
  json j;
  put_name(j, lock.name);
  j["mode"] = mode_name(lock.mode);
  j["limit"] = lock.limit;
  j["last_token"] = lock.last_token;
  j["delay_remaining_ms"] = lock.delay_until > now ? lock.delay_until - now : 0;
  json holders = json::array();
  for (const core::HolderInfo& h : lock.holders) {
    holders.push_back({{"session", h.session},
                       {"owner", h.owner},
                       {"token", h.token},
                       {"mode", mode_name(h.mode)},
                       {"held_ms", age(now, h.acquired_at)}});
  }
  json waiters = json::array();
  for (const core::WaiterInfo& w : lock.waiters) {
    json wj = {{"session", w.session},
               {"owner", w.owner},
               {"mode", mode_name(w.mode)},
               {"waiting_ms", age(now, w.queued_at)}};
    wj["deadline_in_ms"] = w.deadline == 0 ? json(nullptr) : json(w.deadline > now ? w.deadline - now : 0);
    waiters.push_back(std::move(wj));
  }
  j["holders"] = std::move(holders);
  j["waiters"] = std::move(waiters);
  return j;
}

}  // namespace

HttpResponse readyz(ServerServices& server) {
  node::Node& node = server.node();
  const node::NodeStats st = node.stats();
  json j;
  j["role"] = node::role_name(st.role);
  j["applied_index"] = st.applied_index;
  j["log_last_index"] = st.log.last;
  const bool caught_up = st.applied_index + 1 >= st.log.last;
  j["caught_up"] = caught_up;
  j["log_writable"] = st.failure.is_ok();
  j["quarantine_remaining_ms"] = st.quarantine_remaining_ms;
  auto not_ready = [&](int status, const std::string& reason) {
    j["ready"] = false;
    j["reason"] = reason;
    return HttpResponse::json(status, dump(j));
  };
  if (server.shutting_down()) return not_ready(503, "shutting down");
  if (!st.failure.is_ok()) return not_ready(503, "the log failed; the node takes no writes: " + st.failure.message());
  if (!node.opened()) return not_ready(503, std::string(kStartingReason));
  if (st.role != node::Role::kPrimary) {
    const std::string primary = node.primary_address();
    j["primary"] = primary.empty() ? json(nullptr) : json(primary);
    return not_ready(429, primary.empty() ? "standby; no primary elected" : "standby; the primary is " + primary);
  }
  if (!caught_up) return not_ready(503, "applying the log (not caught up)");
  if (st.quarantine_remaining_ms > 0) {
    return not_ready(503, "quarantined after an unclean stop: no lock is granted for " +
                              std::to_string(st.quarantine_remaining_ms) +
                              " ms more; SESSION.OPEN works and blocking acquires wait");
  }
  if (st.pending_proposals >= server.config().node.max_pending_proposals) {
    return not_ready(503, "overloaded: the proposal queue is full");
  }
  j["ready"] = true;
  return HttpResponse::json(200, dump(j));
}

HttpResponse api_status(ServerServices& server) {
  node::Node& node = server.node();
  const node::NodeStats st = node.stats();
  const MetricsView v = server.observability().view();
  json j;
  j["role"] = node::role_name(st.role);
  j["primary"] = node.primary_address();
  j["listen"] = server.listen_address();
  j["cluster"] = v.cluster;
  j["uptime_s"] = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                    server.started_at())
                      .count();
  j["applied_index"] = st.applied_index;
  j["revision"] = st.applied_revision;
  j["log"] = {{"first", st.log.first}, {"last", st.log.last}, {"snapshot", st.log.snapshot}};
  j["pending_proposals"] = st.pending_proposals;
  j["node_failure"] = st.failure.is_ok() ? json(nullptr) : json(st.failure.message());
  j["sessions"] = v.sessions;
  j["locks"] = v.locks;
  j["waiters"] = v.waiters;
  j["longest_queue"] = v.longest_queue;
  j["long_held_locks"] = v.long_held_locks;
  j["long_hold_ms"] = server.config().long_hold.count();
  j["oldest_hold_ms"] = static_cast<std::int64_t>(v.oldest_hold_seconds * 1000);
  j["last_token"] = v.last_token;
  j["keepalives_per_second"] = server.observability().metrics().keepalives_per_second();
  j["connected_clients"] = v.connected_clients;
  j["history_entries"] = v.history_entries;
  // Commit latency per second over the last 5 minutes, oldest first (null: no commit that second).
  json series = json::array();
  for (const auto& b : server.observability().metrics().commit_latency_window(300)) {
    series.push_back(b.count == 0 ? json(nullptr)
                                  : json({{"avg_ms", b.sum / static_cast<double>(b.count) * 1000.0},
                                          {"max_ms", b.max * 1000.0},
                                          {"commits", b.count}}));
  }
  j["commit_latency_per_second"] = std::move(series);
  // The highest applied log index per second over the last 5 minutes, oldest
  // first (null: nothing applied that second).
  json applied = json::array();
  for (const auto& b : server.observability().applied_index_window(300)) {
    applied.push_back(b.count == 0 ? json(nullptr) : json(static_cast<std::uint64_t>(b.max)));
  }
  j["applied_index_per_second"] = std::move(applied);
  return HttpResponse::json(200, dump(j));
}

HttpResponse api_locks(ServerServices& server, std::string_view prefix, std::size_t limit) {
  const core::LogMillis now = server.node().log_now();
  json locks = json::array();
  const auto all = server.node().state().locks(prefix, limit);
  for (const core::LockInfo& lock : all) locks.push_back(lock_json(lock, now));
  json j;
  j["count"] = all.size();
  j["truncated"] = all.size() == limit;
  j["locks"] = std::move(locks);
  return HttpResponse::json(200, dump(j));
}

HttpResponse api_lock(ServerServices& server, const std::string& name) {
  auto lock = server.node().state().lock(name);
  if (!lock) {
    json j;
    put_name(j, name);
    j["error"] = "no such lock (nobody holds or waits for it)";
    return HttpResponse::json(404, dump(j));
  }
  return HttpResponse::json(200, dump(lock_json(*lock, server.node().log_now())));
}

HttpResponse api_sessions(ServerServices& server, std::size_t limit) {
  node::Node& node = server.node();
  const core::LogMillis now = node.log_now();
  json sessions = json::array();
  // One page in id order (O(log n + limit)); never a copy of every session.
  const std::size_t total = node.state().session_count();
  for (const core::SessionInfo& s : node.state().sessions(0, limit)) {
    json sj = {{"id", s.id},
               {"owner", s.owner},
               {"ttl_ms", s.ttl_ms},
               {"age_ms", age(now, s.opened_at)},
               {"held", s.held},
               {"waiting", s.waiting},
               {"compat", s.compat}};
    auto remaining = node.remaining_ms(s.id);
    sj["remaining_ms"] = (!remaining || *remaining == node::kNeverExpires) ? json(nullptr) : json(*remaining);
    sessions.push_back(std::move(sj));
  }
  json j;
  j["count"] = total;
  j["truncated"] = total > limit;
  j["sessions"] = std::move(sessions);
  return HttpResponse::json(200, dump(j));
}

HttpResponse api_history(ServerServices& server, bool filter, const std::string& lock, std::size_t count,
                         std::uint64_t before_id) {
  const HistoryStore* history = server.observability().history();
  json records = json::array();
  if (history != nullptr) {
    for (const HistoryRecord& r : history->query(filter, lock, count, before_id)) {
      json rj = {{"id", r.id},
                 {"time_ms", r.wall_ms},
                 {"log_index", r.log_index},
                 {"event", audit_kind_name(r.event.kind)},
                 {"session", r.event.session},
                 {"owner", r.event.owner},
                 {"token", r.event.token},
                 {"reason", r.event.reason}};
      put_name(rj, r.event.lock, "lock");  // the names of `leasehold history --json`
      if (r.event.wait_ms >= 0) rj["wait_ms"] = r.event.wait_ms;
      if (r.event.hold_ms >= 0) rj["hold_ms"] = r.event.hold_ms;
      if (r.event.kind == AuditKind::kLockDelay) rj["delay_ms"] = r.event.delay_ms;
      records.push_back(std::move(rj));
    }
  }
  json j;
  j["records"] = std::move(records);
  j["retained"] = history != nullptr ? history->size() : 0;
  j["max_entries"] = server.config().history_max_entries;
  return HttpResponse::json(200, dump(j));
}

}  // namespace leasehold::server
