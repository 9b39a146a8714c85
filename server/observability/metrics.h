// server/observability/metrics.h: the Prometheus metrics of a leasehold server
// (docs/operations.md, "Metrics"), in the text exposition format, built on
// prometheus-cpp's registry and text serializer.
//
// Metrics are views, never a second source of truth: the lock event
// counters and the wait/hold histograms count the AuditEvents derived from
// applied commands (server/observability/audit_event.h); the commit histograms observe the
// node's appends (node::NodeObserver) and the log's synced writes; every
// gauge is read from the node and the state machine at scrape time
// (MetricsView, filled by the caller).
//
// Thread-safety: observe_fsync() may be called from any thread (the log's);
// everything else on the loop thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/observability/audit_event.h"

namespace leasehold::server {

// What the gauges show; filled from the node and the state at scrape time.
struct MetricsView {
  bool primary = false;
  bool cluster = false;
  bool node_failed = false;
  std::uint64_t sessions = 0;
  std::uint64_t locks = 0;
  std::uint64_t waiters = 0;
  std::uint64_t longest_queue = 0;
  std::uint64_t long_held_locks = 0;
  double oldest_hold_seconds = 0;
  double long_hold_threshold_seconds = 0;
  std::uint64_t last_token = 0;
  std::uint64_t revision = 0;
  std::uint64_t applied_index = 0;
  std::uint64_t log_last_index = 0;
  std::uint64_t pending_proposals = 0;
  std::uint64_t catch_ups = 0;
  std::uint64_t promotions = 0;
  std::uint64_t step_downs = 0;
  std::uint64_t connected_clients = 0;
  std::uint64_t history_entries = 0;
  std::uint64_t history_write_errors = 0;
};

// Per-second buckets over the last `kSeconds` (for "per second" gauges and
// the dashboard's latency chart).
class SecondWindow {
 public:
  static constexpr std::size_t kSeconds = 300;
  struct Bucket {
    std::int64_t second = -1;  // steady seconds; -1 = empty
    std::uint64_t count = 0;
    double sum = 0;
    double max = 0;
  };
  void add(std::chrono::steady_clock::time_point now, double value);
  // Buckets of the last `seconds` complete seconds before `now`, oldest first
  // (count 0 for seconds with nothing).
  std::vector<Bucket> last(std::chrono::steady_clock::time_point now, std::size_t seconds) const;

 private:
  std::array<Bucket, kSeconds + 1> ring_{};
};

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void record(const AuditEvent& event);
  void observe_commit(std::size_t commands, std::chrono::steady_clock::duration latency, bool ok, bool cluster);
  void observe_fsync(std::chrono::steady_clock::duration latency);  // any thread
  void observe_loop_turn(double seconds);  // one event-loop turn's busy time
  void count_keepalive();

  // Keepalives per second over the last 10 complete seconds.
  double keepalives_per_second() const;
  // Commit latency (seconds) per second over the last `seconds`.
  std::vector<SecondWindow::Bucket> commit_latency_window(std::size_t seconds) const;

  // Sets the gauges from `view` and renders every metric in the text format.
  std::string render(const MetricsView& view);

 private:
  // The releases counter labelled for `cause` (a release's cause; anything
  // else is a bug in EventDeriver, and stops the server).
  prometheus::Counter* releases_by_cause(AuditCause cause) const;

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* grants_;
  prometheus::Family<prometheus::Counter>* releases_;
  prometheus::Family<prometheus::Counter>* expiries_;
  prometheus::Family<prometheus::Counter>* revokes_;
  prometheus::Family<prometheus::Counter>* kills_;
  // The labelled children, looked up once here rather than per event
  // (Family::Add hashes a label map under a mutex).
  prometheus::Counter* grants_acquired_;
  prometheus::Counter* grants_queued_;
  prometheus::Counter* grants_compat_;
  prometheus::Counter* releases_released_;
  prometheus::Counter* releases_session_closed_;
  prometheus::Counter* releases_compat_delete_;
  prometheus::Counter* releases_compat_replaced_;
  prometheus::Counter* releases_by_other_;
  prometheus::Counter* expiries_session_;
  prometheus::Counter* expiries_lock_;
  prometheus::Counter* kills_session_;
  prometheus::Counter* kills_lock_;
  prometheus::Counter* revokes_revoked_;
  prometheus::Counter* lock_delays_;
  prometheus::Histogram* wait_;
  prometheus::Histogram* hold_;
  prometheus::Counter* keepalives_;
  prometheus::Histogram* batch_;
  prometheus::Histogram* commit_;
  prometheus::Counter* commit_failures_;
  prometheus::Histogram* fsync_;
  prometheus::Histogram* loop_turn_;
  prometheus::Histogram* etcd_txn_;
  prometheus::Counter* failovers_;
  prometheus::Counter* step_downs_;
  prometheus::Counter* catch_ups_;
  prometheus::Family<prometheus::Gauge>* role_;
  std::vector<std::pair<prometheus::Gauge*, double MetricsView::*>> double_gauges_;
  std::vector<std::pair<prometheus::Gauge*, std::uint64_t MetricsView::*>> int_gauges_;
  prometheus::Gauge* node_failed_;
  prometheus::Gauge* keepalive_rate_;
  std::uint64_t seen_promotions_ = 0;
  std::uint64_t seen_step_downs_ = 0;
  std::uint64_t seen_catch_ups_ = 0;
  SecondWindow keepalive_window_;
  SecondWindow commit_window_;
};

}  // namespace leasehold::server
