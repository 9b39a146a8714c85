#include "server/observability/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>

#include "common/assert.h"

namespace leasehold::server {
namespace {

using prometheus::Histogram;

Histogram::BucketBoundaries latency_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}
Histogram::BucketBoundaries duration_buckets() {  // waits and holds: ms to hours
  return {0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600};
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::int64_t second_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

void SecondWindow::add(std::chrono::steady_clock::time_point now, double value) {
  const std::int64_t s = second_of(now);
  Bucket& b = ring_[static_cast<std::size_t>(s) % ring_.size()];
  if (b.second != s) b = Bucket{s, 0, 0, 0};
  ++b.count;
  b.sum += value;
  b.max = std::max(b.max, value);
}

std::vector<SecondWindow::Bucket> SecondWindow::last(std::chrono::steady_clock::time_point now,
                                                     std::size_t count) const {
  count = std::min(count, kSeconds);
  const std::int64_t current = second_of(now);
  std::vector<Bucket> out;
  out.reserve(count);
  for (std::int64_t s = current - static_cast<std::int64_t>(count); s < current; ++s) {
    const Bucket& b = ring_[static_cast<std::size_t>(s) % ring_.size()];
    out.push_back(b.second == s ? b : Bucket{s, 0, 0, 0});
  }
  return out;
}

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  grants_ = &prometheus::BuildCounter()
                 .Name("leasehold_grants_total")
                 .Help("Locks granted, by reason: acquired (at once), queued (a waiter woke), compat (SET NX)")
                 .Register(r);
  releases_ = &prometheus::BuildCounter()
                   .Name("leasehold_releases_total")
                   .Help("Holds given up, by reason: released, released_by_other, session_closed, compat_delete, compat_replaced")
                   .Register(r);
  expiries_ = &prometheus::BuildCounter()
                   .Name("leasehold_expiries_total")
                   .Help("Session expiries (scope=session) and the holds they took (scope=lock)")
                   .Register(r);
  revokes_ = &prometheus::BuildCounter()
                  .Name("leasehold_revokes_total")
                  .Help("Holds removed by LOCK.REVOKE (reason=revoked)")
                  .Register(r);
  kills_ = &prometheus::BuildCounter()
                .Name("leasehold_kills_total")
                .Help("Sessions killed by SESSION.KILL (scope=session) and the holds they took (scope=lock)")
                .Register(r);
  lock_delays_ = &prometheus::BuildCounter()
                      .Name("leasehold_lock_delays_total")
                      .Help("Lock-delays started (a holder's session expired or was killed on a lock with a delay)")
                      .Register(r)
                      .Add({});
  wait_ = &prometheus::BuildHistogram()
               .Name("leasehold_acquire_wait_seconds")
               .Help("Time from LOCK.ACQUIRE to the grant (0 for a grant at once), log clock")
               .Register(r)
               .Add({}, duration_buckets());
  hold_ = &prometheus::BuildHistogram()
               .Name("leasehold_hold_seconds")
               .Help("How long a lock was held, observed when the hold ends (release, expiry, revoke, kill)")
               .Register(r)
               .Add({}, duration_buckets());
  keepalives_ = &prometheus::BuildCounter()
                     .Name("leasehold_keepalives_total")
                     .Help("Session keepalives served (SESSION.KEEPALIVE)")
                     .Register(r)
                     .Add({});
  batch_ = &prometheus::BuildHistogram()
                .Name("leasehold_commit_batch_commands")
                .Help("Commands per group commit (one log append)")
                .Register(r)
                .Add({}, Histogram::BucketBoundaries{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096});
  commit_ = &prometheus::BuildHistogram()
                 .Name("leasehold_commit_seconds")
                 .Help("Latency of one log append until durable (embedded: RocksDB write + sync; cluster: etcd txn)")
                 .Register(r)
                 .Add({}, latency_buckets());
  commit_failures_ = &prometheus::BuildCounter()
                          .Name("leasehold_commit_failures_total")
                          .Help("Log appends that failed")
                          .Register(r)
                          .Add({});
  fsync_ = &prometheus::BuildHistogram()
                .Name("leasehold_fsync_seconds")
                .Help("Latency of the log's synced write (embedded mode: the entry journal's write and fdatasync, then the RocksDB Put)")
                .Register(r)
                .Add({}, latency_buckets());
  loop_turn_ = &prometheus::BuildHistogram()
                   .Name("leasehold_loop_turn_seconds")
                   .Help("Busy time of each event-loop turn (not waiting in poll): the longest ones are stalls")
                   .Register(r)
                   .Add({}, latency_buckets());
  etcd_txn_ = &prometheus::BuildHistogram()
                   .Name("leasehold_etcd_txn_seconds")
                   .Help("Latency of the etcd append transaction (cluster mode)")
                   .Register(r)
                   .Add({}, latency_buckets());
  failovers_ = &prometheus::BuildCounter()
                    .Name("leasehold_failovers_total")
                    .Help("Times this node became primary (cluster mode), since start")
                    .Register(r)
                    .Add({});
  step_downs_ = &prometheus::BuildCounter()
                     .Name("leasehold_step_downs_total")
                     .Help("Times this node stopped being primary (cluster mode), since start")
                     .Register(r)
                     .Add({});
  catch_ups_ = &prometheus::BuildCounter()
                    .Name("leasehold_catch_ups_total")
                    .Help("Standby catch-ups from a snapshot (cluster mode), since start")
                    .Register(r)
                    .Add({});
  role_ = &prometheus::BuildGauge()
               .Name("leasehold_role")
               .Help("1 for this node's role (primary or standby), 0 for the other")
               .Register(r);
  // Every label value exists from the start (0), so rate() and absent() work.
  grants_acquired_ = &grants_->Add({{"reason", "acquired"}});
  grants_queued_ = &grants_->Add({{"reason", "queued"}});
  grants_compat_ = &grants_->Add({{"reason", "compat"}});
  releases_released_ = &releases_->Add({{"reason", "released"}});
  releases_session_closed_ = &releases_->Add({{"reason", "session_closed"}});
  releases_compat_delete_ = &releases_->Add({{"reason", "compat_delete"}});
  releases_compat_replaced_ = &releases_->Add({{"reason", "compat_replaced"}});
  releases_by_other_ = &releases_->Add({{"reason", "released_by_other"}});
  expiries_session_ = &expiries_->Add({{"scope", "session"}});
  expiries_lock_ = &expiries_->Add({{"scope", "lock"}});
  kills_session_ = &kills_->Add({{"scope", "session"}});
  kills_lock_ = &kills_->Add({{"scope", "lock"}});
  revokes_revoked_ = &revokes_->Add({{"reason", "revoked"}});
  auto gauge = [&](const char* name, const char* help) -> prometheus::Gauge* {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
  };
  int_gauges_ = {
      {gauge("leasehold_sessions", "Live sessions"), &MetricsView::sessions},
      {gauge("leasehold_locks", "Locks with holders or waiters"), &MetricsView::locks},
      {gauge("leasehold_waiters", "Queued waits on all locks"), &MetricsView::waiters},
      {gauge("leasehold_queue_depth_max", "Waiters queued on the lock with the longest queue"),
       &MetricsView::longest_queue},
      {gauge("leasehold_long_held_locks", "Holds older than --long-hold-ms"), &MetricsView::long_held_locks},
      {gauge("leasehold_last_token", "The highest fencing token granted"), &MetricsView::last_token},
      {gauge("leasehold_revision", "State machine revision (commands applied)"), &MetricsView::revision},
      {gauge("leasehold_applied_index", "Last log entry applied"), &MetricsView::applied_index},
      {gauge("leasehold_log_last_index", "Last log entry written"), &MetricsView::log_last_index},
      {gauge("leasehold_pending_proposals", "Writes queued or in flight"), &MetricsView::pending_proposals},
      {gauge("leasehold_connected_clients", "RESP client connections"), &MetricsView::connected_clients},
      {gauge("leasehold_history_entries", "Records in the audit history"), &MetricsView::history_entries},
      {gauge("leasehold_history_write_errors", "Audit history records that could not be written to disk"),
       &MetricsView::history_write_errors},
  };
  double_gauges_ = {
      {gauge("leasehold_oldest_hold_seconds", "Age of the oldest hold (0 when nothing is held)"),
       &MetricsView::oldest_hold_seconds},
      {gauge("leasehold_long_hold_threshold_seconds", "--long-hold-ms, in seconds"),
       &MetricsView::long_hold_threshold_seconds},
  };
  node_failed_ = gauge("leasehold_node_failed", "1 once the log failed and the node stopped taking writes");
  keepalive_rate_ = gauge("leasehold_keepalives_per_second", "Keepalives per second over the last 10 s");
}

prometheus::Counter* Metrics::releases_by_cause(AuditCause cause) const {
  switch (cause) {
    case AuditCause::kReleased: return releases_released_;
    case AuditCause::kReleasedByOther: return releases_by_other_;
    case AuditCause::kSessionClosed: return releases_session_closed_;
    case AuditCause::kCompatDelete: return releases_compat_delete_;
    case AuditCause::kCompatReplaced: return releases_compat_replaced_;
    case AuditCause::kUnknown:
    case AuditCause::kAcquired:
    case AuditCause::kGrantedFromQueue:
    case AuditCause::kCompatSet:
    case AuditCause::kSessionExpired:
    case AuditCause::kSessionKilled:
    case AuditCause::kRevoked:
    case AuditCause::kLockDelay:
    case AuditCause::kLeaseEnded:
    case AuditCause::kTransferred:
    case AuditCause::kTransferredIn:
    case AuditCause::kConnectionClosed: break;
  }
  // EventDeriver gives a release only the five causes above.
  LEASEHOLD_ASSERT(false, "a release event with cause \"{}\"", audit_cause_text(cause));
  return nullptr;
}

void Metrics::record(const AuditEvent& e) {
  switch (e.kind) {
    case AuditKind::kGrant: {
      (e.cause == AuditCause::kCompatSet ? grants_compat_ : (e.wait_ms >= 0 ? grants_queued_ : grants_acquired_))
          ->Increment();
      wait_->Observe(e.wait_ms > 0 ? static_cast<double>(e.wait_ms) / 1000.0 : 0.0);
      return;
    }
    case AuditKind::kRelease:
      releases_by_cause(e.cause)->Increment();
      break;
    case AuditKind::kExpiry: (e.lock.empty() ? expiries_session_ : expiries_lock_)->Increment(); break;
    case AuditKind::kRevoke: revokes_revoked_->Increment(); break;
    case AuditKind::kKill: (e.lock.empty() ? kills_session_ : kills_lock_)->Increment(); break;
    case AuditKind::kLockDelay: lock_delays_->Increment(); return;
    case AuditKind::kLeaseEnded:
    case AuditKind::kTransfer: break;  // no counter of their own: the hold histogram below
  }
  if (e.hold_ms >= 0 && !e.lock.empty()) hold_->Observe(static_cast<double>(e.hold_ms) / 1000.0);
}

void Metrics::observe_commit(std::size_t commands, std::chrono::steady_clock::duration latency, bool ok,
                             bool cluster) {
  if (!ok) {
    commit_failures_->Increment();
    return;
  }
  batch_->Observe(static_cast<double>(commands));
  commit_->Observe(seconds(latency));
  if (cluster) etcd_txn_->Observe(seconds(latency));
  commit_window_.add(std::chrono::steady_clock::now(), seconds(latency));
}

void Metrics::observe_fsync(std::chrono::steady_clock::duration latency) { fsync_->Observe(seconds(latency)); }
void Metrics::observe_loop_turn(double seconds) { loop_turn_->Observe(seconds); }

void Metrics::count_keepalive() {
  keepalives_->Increment();
  keepalive_window_.add(std::chrono::steady_clock::now(), 1);
}

double Metrics::keepalives_per_second() const {
  std::uint64_t n = 0;
  for (const auto& b : keepalive_window_.last(std::chrono::steady_clock::now(), 10)) n += b.count;
  return static_cast<double>(n) / 10.0;
}

std::vector<SecondWindow::Bucket> Metrics::commit_latency_window(std::size_t secs) const {
  return commit_window_.last(std::chrono::steady_clock::now(), secs);
}

std::string Metrics::render(const MetricsView& view) {
  role_->Add({{"role", "primary"}}).Set(view.primary ? 1 : 0);
  role_->Add({{"role", "standby"}}).Set(view.primary ? 0 : 1);
  for (auto& [g, field] : int_gauges_) g->Set(static_cast<double>(view.*field));
  for (auto& [g, field] : double_gauges_) g->Set(view.*field);
  node_failed_->Set(view.node_failed ? 1 : 0);
  keepalive_rate_->Set(keepalives_per_second());
  // Node counters since open; the node counts, the metric follows.
  auto follow = [](prometheus::Counter* c, std::uint64_t now, std::uint64_t& seen) {
    if (now > seen) c->Increment(static_cast<double>(now - seen));
    seen = now;
  };
  follow(failovers_, view.promotions, seen_promotions_);
  follow(step_downs_, view.step_downs, seen_step_downs_);
  follow(catch_ups_, view.catch_ups, seen_catch_ups_);
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace leasehold::server
