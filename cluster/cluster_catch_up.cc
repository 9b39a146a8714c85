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
    bool log_watch = false;
    {
      std::unique_lock lock(mu_);
      const auto refresh_due = [&] {
        return leader_refresh_requested_ && std::chrono::steady_clock::now() >= leader_refresh_due_;
      };
      while (!stop.stop_requested() && !catch_up_requested_ && !leader_watch_lost_ && !refresh_due() &&
             !log_watch_change_requested_) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
      }
      if (stop.stop_requested()) return;
      catch_up = std::exchange(catch_up_requested_, false);
      leader = std::exchange(leader_watch_lost_, false);
      refresh = refresh_due();
      if (refresh) leader_refresh_requested_ = false;
      log_watch = std::exchange(log_watch_change_requested_, false);
    }
    const bool read_leader = reconcile_leader_watch(leader, stop);
    if (refresh && !read_leader) refresh_leader();
    if (catch_up) run_catch_up(stop);
    // After a catch-up too: it installs a watch, which a primary drops.
    if (log_watch || catch_up) reconcile_log_watch(stop);
  }
}

bool ClusterMember::Impl::reconcile_leader_watch(bool lost, const std::stop_token& stop) {
  bool want = true;
  {
    std::lock_guard lock(mu_);
    want = want_standby_watches_;
  }
  if (!want) {
    if (leader_watch_ != nullptr) {
      set_leader_watch(nullptr);
      spdlog::debug("leader watch dropped while primary");
    }
    return false;
  }
  if (leader_watch_ != nullptr && !lost) return false;
  restart_leader_watch(stop);
  return true;
}

void ClusterMember::Impl::restart_leader_watch(const std::stop_token& stop) {
  set_leader_watch(nullptr);
  std::chrono::milliseconds backoff{100};
  while (!stop.stop_requested()) {
    auto watch = start_leader_watch();
    if (watch) {
      set_leader_watch(std::move(watch).value());
      refresh_leader();
      return;
    }
    spdlog::warn("leader watch restart failed, retrying in {} ms error=\"{}\"", backoff.count(),
                 watch.status().to_string());
    sleep_for(backoff, stop);
    backoff = std::min<std::chrono::milliseconds>(2 * backoff, std::chrono::seconds(2));
  }
}

void ClusterMember::Impl::set_log_watch(std::unique_ptr<etcd::Watcher> watch) {
  const bool running = watch != nullptr;
  log_watch_ = std::move(watch);
  std::lock_guard lock(mu_);
  log_watch_running_ = running;
}

void ClusterMember::Impl::set_leader_watch(std::unique_ptr<etcd::Watcher> watch) {
  const bool running = watch != nullptr;
  leader_watch_ = std::move(watch);
  std::lock_guard lock(mu_);
  leader_watch_running_ = running;
}

void ClusterMember::Impl::want_standby_watches(bool want) {
  {
    std::lock_guard lock(mu_);
    want_standby_watches_ = want;
    log_watch_change_requested_ = true;
  }
  cv_.notify_all();
}

void ClusterMember::Impl::reconcile_log_watch(const std::stop_token& stop) {
  bool want = true;
  {
    std::lock_guard lock(mu_);
    want = want_standby_watches_;
  }
  if (!want) {
    if (log_watch_dropped_ || log_watch_ == nullptr) return;  // none to drop (a catch-up installs one)
    // Every entry below next_revision() was handed to the loop thread.
    log_watch_dropped_at_ = log_watch_->next_revision();
    set_log_watch(nullptr);
    log_watch_dropped_ = true;
    spdlog::debug("log watch dropped while primary next_revision={}", log_watch_dropped_at_);
    return;
  }
  if (!log_watch_dropped_) return;
  const std::int64_t from = std::max(log_watch_dropped_at_, log_->last_append_revision() + 1);
  const std::uint64_t generation = next_generation_.fetch_add(1);
  auto watch = start_log_watch(from, generation);
  log_watch_dropped_ = false;  // from here a watch, or the catch-up that installs one
  if (!watch) {
    on_loop([why = watch.status()](Impl& self) {
      self.request_catch_up(Status(why.code(), "log watch restart after a step-down failed: " + why.message()));
    });
    return;
  }
  // The watch's failures count once the loop thread took its generation;
  // one before that is seen by failed() below. The watcher outlives the
  // task (on_loop_and_wait).
  const bool installed = on_loop_and_wait(
                             [w = watch->get(), generation](Impl& self) {
                               self.watch_generation_ = generation;
                               if (w->failed()) {
                                 self.request_catch_up(
                                     Status(ErrorCode::kUnavailable, "the restarted log watch failed"));
                               }
                               return Status::ok();
                             },
                             stop)
                             .has_value();
  if (!installed) return;
  set_log_watch(std::move(watch).value());
  spdlog::debug("log watch restarted after a step-down from_revision={}", from);
}

std::optional<Status> ClusterMember::Impl::on_loop_and_wait(std::function<Status(Impl&)> task,
                                                            const std::stop_token& stop) {
  auto result = std::make_shared<std::optional<Status>>();
  on_loop([task = std::move(task), result](Impl& self) {
    Status st = task(self);
    {
      std::lock_guard lock(self.mu_);
      *result = std::move(st);
    }
    self.cv_.notify_all();
  });
  std::unique_lock lock(mu_);
  while (!result->has_value()) {
    if (stop.stop_requested()) return std::nullopt;
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  return std::move(**result);
}

void ClusterMember::Impl::run_catch_up(const std::stop_token& stop) {
  set_log_watch(nullptr);  // events it still posted are harmless: entries are held by index
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
  // The watcher outlives the task (on_loop_and_wait).
  const std::optional<Status> applied = on_loop_and_wait(
      [shared, w = watch->get(), generation, attempt](Impl& self) {
        return self.apply_catch_up(*shared, *w, generation, attempt);
      },
      stop);
  if (!applied) return Status(ErrorCode::kUnavailable, "shutting down");
  const Status& outcome = *applied;
  if (outcome) {
    set_log_watch(std::move(watch).value());
    log_watch_dropped_ = false;
  }
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
