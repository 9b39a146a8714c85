// cluster/cluster_catch_up.cc: the catch-up of ClusterMember::Impl
// (cluster_member_impl.h, "Catch-up"; docs/cluster.md "Falling behind a
// compaction"): the log and leader watches, and the reload of the etcd
// snapshot and the log after it when the log watch fell behind or saw a gap.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "cluster/cluster_member_impl.h"

namespace leasehold::cluster {
namespace {

// Log entries after the etcd snapshot one catch-up reads (the primary
// snapshots every --snapshot-every-commands, 100 000 by default).
constexpr std::size_t kMaxCatchUpEntries = 1'000'000;

}  // namespace

Result<std::unique_ptr<etcd::Watcher>> ClusterMember::Impl::start_log_watch(std::int64_t from_revision,
                                                                            std::uint64_t generation) {
  etcd::WatchOptions wo;
  wo.key = log::EtcdLog::log_prefix(options_.prefix());
  wo.range_end = etcd::prefix_end(wo.key);
  wo.start_revision = from_revision;
  return etcd::Watcher::start(
      *client_, wo, [this](const std::vector<etcd::WatchEvent>& events) { on_log_events(events); },
      [this, generation](const etcd::WatchFailure& failure) {
        Status why = failure.compact_revision > 0
                         ? Status(failure.status.code(), "log watch fell behind a compaction: " +
                                                             failure.status.message())
                         : Status(failure.status.code(), "log watch failed: " + failure.status.message());
        on_loop([why = std::move(why), generation](Impl& self) {
          if (generation != self.watch_generation_) return;  // a watch already replaced
          self.request_catch_up(why);
        });
      });
}

Result<std::unique_ptr<etcd::Watcher>> ClusterMember::Impl::start_leader_watch() {
  etcd::WatchOptions lw;
  lw.key = election_prefix() + "/";
  lw.range_end = etcd::prefix_end(lw.key);
  return etcd::Watcher::start(
      *client_, lw, [this](const std::vector<etcd::WatchEvent>&) { refresh_leader(); },
      [this](const etcd::WatchFailure& failure) {
        spdlog::warn("leader watch failed, restarting it error=\"{}\"", failure.status.to_string());
        {
          std::lock_guard lock(mu_);
          leader_watch_lost_ = true;
        }
        cv_.notify_all();
      });
}

void ClusterMember::Impl::request_catch_up(const Status& why) {
  if (recovering_.load()) {
    if (recover_again_.is_ok()) recover_again_ = why;
    return;
  }
  recovering_.store(true);  // from here apply_held() only holds entries
  recovery_why_ = why;
  recovery_from_applied_ = node_->applied_index();
  recovery_started_ = std::chrono::steady_clock::now();
  if (node_->role() == node::Role::kPrimary) {
    // A primary never resets its state: it steps down first.
    const Status down(ErrorCode::kUnavailable, "stepped down to catch up the log: " + why.message());
    node_->step_down(down);
    on_node_stepped_down(down);
  }
  spdlog::info("log catch-up started applied_index={} error=\"{}\"", recovery_from_applied_, why.to_string());
  {
    std::lock_guard lock(mu_);
    catch_up_requested_ = true;
  }
  cv_.notify_all();
}

void ClusterMember::Impl::catch_up_loop() {
  const std::stop_token stop = stop_all_.get_token();
  for (;;) {
    bool catch_up = false;
    bool leader = false;
    bool refresh = false;
    {
      std::unique_lock lock(mu_);
      const auto refresh_due = [&] {
        return leader_refresh_requested_ && std::chrono::steady_clock::now() >= leader_refresh_due_;
      };
      while (!stop.stop_requested() && !catch_up_requested_ && !leader_watch_lost_ && !refresh_due()) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
      }
      if (stop.stop_requested()) return;
      catch_up = std::exchange(catch_up_requested_, false);
      leader = std::exchange(leader_watch_lost_, false);
      refresh = refresh_due();
      if (refresh) leader_refresh_requested_ = false;
    }
    if (leader) restart_leader_watch(stop);  // reads the leader too
    else if (refresh) refresh_leader();
    if (catch_up) run_catch_up(stop);
  }
}

void ClusterMember::Impl::restart_leader_watch(const std::stop_token& stop) {
  leader_watch_.reset();
  std::chrono::milliseconds backoff{100};
  while (!stop.stop_requested()) {
    auto watch = start_leader_watch();
    if (watch) {
      leader_watch_ = std::move(watch).value();
      refresh_leader();
      return;
    }
    spdlog::warn("leader watch restart failed, retrying in {} ms error=\"{}\"", backoff.count(),
                 watch.status().to_string());
    sleep_for(backoff, stop);
    backoff = std::min<std::chrono::milliseconds>(2 * backoff, std::chrono::seconds(2));
  }
}

void ClusterMember::Impl::run_catch_up(const std::stop_token& stop) {
  log_watch_.reset();  // events it still posted are harmless: entries are held by index
  std::chrono::milliseconds backoff{100};
  for (int attempt = 1; !stop.stop_requested(); ++attempt) {
    const Status st = catch_up_once(attempt, stop);
    if (st) return;
    if (stop.stop_requested()) return;
    if (st.code() == ErrorCode::kCorruption) {
      return fatal_later(Status(st.code(), "log catch-up failed: " + st.message()));
    }
    spdlog::warn("log catch-up attempt={} failed, retrying in {} ms error=\"{}\"", attempt, backoff.count(),
                 st.to_string());
    sleep_for(backoff, stop);
    backoff = std::min<std::chrono::milliseconds>(2 * backoff, std::chrono::seconds(2));
  }
}

Status ClusterMember::Impl::catch_up_once(int attempt, const std::stop_token& stop) {
  auto data = log_->read_catch_up(kMaxCatchUpEntries);
  if (!data) return data.status();
  const std::uint64_t generation = next_generation_.fetch_add(1);
  auto watch = start_log_watch(data->revision + 1, generation);
  if (!watch) return watch.status();
  auto shared = std::make_shared<log::EtcdCatchUp>(std::move(data).value());
  auto result = std::make_shared<std::optional<Status>>();
  // The watcher outlives the task: this thread waits for its answer, and
  // the task cannot run after ~Impl (which joins this thread) began.
  on_loop([shared, w = watch->get(), generation, attempt, result](Impl& self) {
    Status st = self.apply_catch_up(*shared, *w, generation, attempt);
    {
      std::lock_guard lock(self.mu_);
      *result = std::move(st);
    }
    self.cv_.notify_all();
  });
  Status outcome;
  {
    std::unique_lock lock(mu_);
    while (!result->has_value()) {
      if (stop.stop_requested()) return Status(ErrorCode::kUnavailable, "shutting down");
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    outcome = **result;
  }
  if (outcome) log_watch_ = std::move(watch).value();
  return outcome;
}

Status ClusterMember::Impl::apply_catch_up(log::EtcdCatchUp& data, const etcd::Watcher& watch,
                                           std::uint64_t generation, int attempt) {
  if (watch.failed()) return Status(ErrorCode::kUnavailable, "the new log watch failed before it was installed");
  if (node_->role() == node::Role::kPrimary) {
    return Status(ErrorCode::kConflict, "this node is primary; only a standby catches up");
  }
  if (Status st = node_->reset_to_snapshot(data.snapshot_index, data.snapshot_bytes); !st) return st;
  for (const auto& [index, batch] : data.entries) {
    if (Status st = node_->follow(index, batch); !st) return st;
  }
  watch_generation_ = generation;
  recovering_.store(false);
  const log::LogIndex applied = node_->applied_index();
  applied_.store(applied);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                          recovery_started_);
  spdlog::warn(
      "log catch-up recovered from the etcd snapshot reason=\"{}\" applied_index_before={} snapshot_index={} "
      "replayed_entries={} applied_index={} read_revision={} watch_from_revision={} attempts={} took_ms={}",
      recovery_why_.message(), recovery_from_applied_, data.snapshot_index, data.entries.size(), applied,
      data.revision, data.revision + 1, attempt, took.count());
  apply_held();  // what the new watch delivered meanwhile
  cv_.notify_all();
  if (!recover_again_.is_ok()) request_catch_up(std::exchange(recover_again_, Status()));
  return Status::ok();
}

}  // namespace leasehold::cluster
