// server/observability/observability.h: metrics and the audit history of one
// server, wired to its node (docs/operations.md). The operations HTTP
// listener that shows them is the http room's (server/http/http_side.h).
//
// attach() hooks the node (node::NodeObserver): every applied command goes
// through EventDeriver; its events are counted by Metrics, appended to the
// HistoryStore, and revokes / kills are logged at info level. Each append's
// batch size and latency go to Metrics. Nothing here changes the state.
//
// Who asked: the LOCK.REVOKE / SESSION.KILL handlers call note_requester()
// before proposing; the next matching event's reason then names the
// requester ("revoked by 127.0.0.1:5000 (name=ops)"). On a standby (which
// only follows the log) the requester is unknown and not named.
//
// Thread-safety: loop thread only (Metrics::observe_fsync excepted).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "node/node.h"
#include "server/observability/audit_event.h"
#include "server/observability/history_store.h"
#include "server/base/config.h"
#include "server/observability/metrics.h"

namespace leasehold::server {

// What Observability reads of the server that owns it (the Server
// implements it). Loop thread only.
class ObservedServer {
 public:
  virtual const ServerConfig& config() const = 0;
  virtual node::Node& node() = 0;
  // Connected clients now (a gauge).
  virtual std::size_t client_count() const = 0;

 protected:
  ~ObservedServer() = default;
};

class Observability {
 public:
  // `server` outlives this object.
  explicit Observability(ObservedServer& server);
  ~Observability();
  Observability(const Observability&) = delete;
  Observability& operator=(const Observability&) = delete;

  // Opens <data_dir>/history.log (kIoError / kCorruption naming the file).
  Status open_history();
  // Starts deriving from the node's current state and hooks its observer.
  void attach(node::Node& node, bool cluster);
  void note_requester(const std::string& key, std::string who);
  static std::string revoke_key(const std::string& lock) { return "revoke:" + lock; }
  static std::string kill_key(core::SessionId session) { return "kill:" + std::to_string(session); }

  Metrics& metrics() { return metrics_; }
  const HistoryStore* history() const { return history_.get(); }
  // Writes the records appended since the last call (one write()).
  void flush_history() {
    if (history_) history_->flush();
  }
  // The gauges' view of the node and state now.
  MetricsView view() const;
  // The highest log index applied in each of the last `seconds` complete
  // seconds (max), oldest first; count 0 for a second with nothing applied
  // (the dashboard's applied-index chart).
  std::vector<SecondWindow::Bucket> applied_index_window(std::size_t seconds) const {
    return applied_window_.last(std::chrono::steady_clock::now(), seconds);
  }

 private:
  void on_applied(log::LogIndex index, const core::Command& command, const core::ApplyResult& result);

  ObservedServer& server_;
  Metrics metrics_;
  EventDeriver deriver_;
  std::vector<AuditEvent> events_;  // on_applied(): reused, so deriving allocates no vector per command
  std::unique_ptr<HistoryStore> history_;
  std::map<std::string, std::string> requesters_;
  core::Token last_token_ = 0;  // highest token granted (locks leave the state when free)
  SecondWindow applied_window_;  // applied indexes per second
};

}  // namespace leasehold::server
