// cluster/cluster_member.cc: follow, campaign, promote, step down (see the header).
#include "cluster/cluster_member.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/read_barrier.h"
#include "etcd/election.h"
#include "etcd/keepalive.h"
#include "etcd/watcher.h"
#include "log/etcd_log.h"

namespace leasehold::cluster {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

constexpr std::size_t kMaxHeldEntries = 100'000;
// Log entries after the etcd snapshot one catch-up reads (the primary
// snapshots every --snapshot-every-commands, 100 000 by default).
constexpr std::size_t kMaxCatchUpEntries = 1'000'000;

struct LoopState {
  bool alive = true;  // loop thread only
};

}  // namespace

class ClusterMember::Impl {
 public:
  Impl(ClusterOptions options, node::Executor post, FatalHandler on_fatal)
      : options_(std::move(options)), post_(std::move(post)), on_fatal_(std::move(on_fatal)) {}

  ~Impl() {
    stop_all_.request_stop();
    cv_.notify_all();
    if (campaign_thread_.joinable()) campaign_thread_.join();
    if (catch_up_thread_.joinable()) catch_up_thread_.join();
    leader_watch_.reset();
    log_watch_.reset();
    barrier_.reset();
    if (node_ != nullptr) {
      // The node may outlive the member: its reads must not pass unconfirmed.
      node_->set_read_barrier([post = post_](std::function<void(Status)> done) {
        post([done = std::move(done)] { done(Status(ErrorCode::kUnavailable, "shutting down")); });
      });
    }
    loop_->alive = false;
    if (log_ != nullptr) log_->set_term(std::nullopt);
  }

  Status open(node::NodeOptions node_options, node::Clock& clock) {
    etcd::ClientOptions co;
    co.endpoints = options_.etcd_endpoints;
    co.call_timeout = options_.etcd_timeout;
    auto client = etcd::Client::create(co);
    if (!client) return client.status();
    client_ = std::shared_ptr<etcd::Client>(std::move(client).value());
    log::EtcdLogOptions lo;
    lo.client = client_;
    lo.prefix = options_.prefix();
    lo.local_dir = options_.data_dir;
    lo.append_timeout = options_.append_timeout;
    node_options.cluster_mode = true;
    node_options.max_batch_bytes = std::min(node_options.max_batch_bytes, log::kEtcdMaxBatchBytes);
    // Recovery reads etcd. A just-started (or loaded) etcd may miss the first
    // calls' deadline: retry kUnavailable for a bounded time.
    const auto recover_until = std::chrono::steady_clock::now() +
                               std::max<std::chrono::milliseconds>(std::chrono::seconds(2), 5 * options_.etcd_timeout);
    for (;;) {
      auto log = log::EtcdLog::open(lo);
      if (!log) return log.status();
      log::EtcdLog* raw_log = log->get();
      auto node = node::Node::open(node_options, std::move(log).value(), clock, post_);
      if (node) {
        log_ = raw_log;  // owned by the node from here on (only then: ~Impl uses it)
        owned_node_ = std::move(node).value();
        break;
      }
      if (node.status().code() != ErrorCode::kUnavailable || std::chrono::steady_clock::now() >= recover_until) {
        return node.status();
      }
      spdlog::warn("cluster recovery: etcd unavailable, retrying error=\"{}\"", node.status().to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    node_ = owned_node_.get();
    applied_.store(node_->stats().applied_index);
    node_->set_primary_address("", "no primary elected yet");
    node_->set_step_down_listener([this](const Status& why) { on_node_stepped_down(why); });
    barrier_ = std::make_unique<ReadBarrier>(client_, options_.prefix(), *node_, post_, [this](const Status& why) {
      if (node_->role() != node::Role::kPrimary) return;
      node_->step_down(why);
      on_node_stepped_down(why);
    });
    node_->set_read_barrier([this](std::function<void(Status)> done) { barrier_->request(std::move(done)); });
    spdlog::info("cluster node recovered prefix={} applied_index={} revision={}", options_.prefix(),
                 node_->stats().applied_index, log_->read_revision());

    auto watch = start_log_watch(log_->read_revision() + 1, watch_generation_);
    if (!watch) return watch.status();
    log_watch_ = std::move(watch).value();
    auto leader_watch = start_leader_watch();
    if (!leader_watch) return leader_watch.status();
    leader_watch_ = std::move(leader_watch).value();
    refresh_leader();
    campaign_thread_ = std::thread([this] { campaign_loop(); });
    catch_up_thread_ = std::thread([this] { catch_up_loop(); });
    return Status::ok();
  }

  std::unique_ptr<node::Node> take_node() { return std::move(owned_node_); }

 private:
  std::string election_prefix() const { return options_.prefix() + "/election"; }

  void on_loop(std::function<void(Impl&)> task) {
    post_([loop = loop_, this, task = std::move(task)] {
      if (loop->alive) task(*this);
    });
  }

  void fatal_later(Status why) {
    on_loop([why = std::move(why)](Impl& self) {
      spdlog::critical("cluster member failed error=\"{}\"", why.to_string());
      if (self.on_fatal_) self.on_fatal_(why);
    });
  }

  // Watch thread: entries of the log, in revision order.
  void on_log_events(const std::vector<etcd::WatchEvent>& events) {
    std::vector<std::pair<log::LogIndex, std::string>> entries;
    for (const etcd::WatchEvent& e : events) {
      if (e.type != etcd::WatchEvent::Type::kPut) continue;  // deletions: log prefix after a snapshot
      auto index = log::EtcdLog::parse_log_key(options_.prefix(), e.kv.key);
      if (index) entries.emplace_back(*index, e.kv.value);
    }
    if (entries.empty()) return;
    on_loop([entries = std::move(entries)](Impl& self) {
      for (auto& [index, value] : entries) {
        self.log_->observe(index);
        self.held_.emplace(index, std::move(value));
      }
      self.apply_held();
    });
  }

  // Loop thread: applies the entries seen on the watch. A primary applies
  // its own appends itself, so it only keeps what it has not applied yet
  // (its own append in flight, or entries of a newer primary that deposed
  // it) and applies those once it is a standby.
  void apply_held() {
    const log::LogIndex applied = node_->stats().applied_index;
    held_.erase(held_.begin(), held_.upper_bound(applied));
    if (recovering_.load()) {
      // The catch-up applies the log up to its read; keep what the new watch
      // delivers after it. Too much: read again after this catch-up.
      if (held_.size() > kMaxHeldEntries) {
        held_.clear();
        recover_again_ = Status(ErrorCode::kLimitExceeded, "too many log entries held during a catch-up");
      }
      return;
    }
    if (node_->role() == node::Role::kStandby) {
      while (!held_.empty()) {
        auto it = held_.begin();
        auto batch = log::EtcdLog::entry_batch(it->second);
        Status st = batch ? node_->follow(it->first, *batch) : batch.status();
        if (!st) {
          if (st.code() == ErrorCode::kCorruption) return fatal_later(st);
          return request_catch_up(st);  // a log gap: reload from etcd
        }
        held_.erase(it);
      }
    } else if (held_.size() > kMaxHeldEntries) {
      // Another node writes the log: step down, drop them, catch up from etcd.
      held_.clear();
      return request_catch_up(Status(ErrorCode::kLimitExceeded, "too many log entries not applied by the primary"));
    }
    applied_.store(node_->stats().applied_index);
    cv_.notify_all();
  }

  // Any thread: who leads now; standbys redirect there.
  void refresh_leader() {
    etcd::Election election(*client_, election_prefix());
    auto leader = election.leader();
    std::string own;
    {
      std::lock_guard lock(mu_);
      own = own_key_;
    }
    on_loop([leader = std::move(leader), own](Impl& self) {
      if (self.node_->role() == node::Role::kPrimary) return;
      if (!leader) return self.node_->set_primary_address("", leader.status().message());
      if (!leader->has_value()) return self.node_->set_primary_address("", "no primary elected");
      if ((*leader)->key == own) {
        return self.node_->set_primary_address("", "this node was elected and is catching up");
      }
      self.node_->set_primary_address((*leader)->value, "");
    });
  }

  // Loop thread: an append failed (deposed / outcome unknown).
  void on_node_stepped_down(const Status& why) {
    log_->set_term(std::nullopt);
    barrier_->set_term(std::nullopt);
    spdlog::warn("stepped down error=\"{}\"", why.to_string());
    node_->set_primary_address("", why.code() == ErrorCode::kUnavailable ? why.message() : "stepped down");
    apply_held();
    {
      std::lock_guard lock(mu_);
      stepped_down_ = true;
      step_down_why_ = why;
    }
    cv_.notify_all();
  }

  bool sleep_for(std::chrono::milliseconds d, const std::stop_token& stop) {
    std::unique_lock lock(mu_);
    const auto until = std::chrono::steady_clock::now() + d;
    while (!stop.stop_requested() && std::chrono::steady_clock::now() < until) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    return !stop.stop_requested();
  }

  void campaign_loop() {
    const std::stop_token all = stop_all_.get_token();
    while (!all.stop_requested()) {
      auto grant = client_->lease_grant(options_.lease_ttl_s);
      if (!grant) {
        on_loop([why = grant.status()](Impl& self) {
          if (self.node_->role() == node::Role::kStandby) self.node_->set_primary_address("", why.message());
        });
        sleep_for(std::chrono::milliseconds(200), all);
        continue;
      }
      campaign_with_lease(*grant, all);
      (void)client_->lease_revoke(grant->id);  // best effort: the key goes now, not after the TTL
      {
        std::lock_guard lock(mu_);
        own_key_.clear();
      }
      if (!all.stop_requested()) sleep_for(std::chrono::milliseconds(100), all);
    }
  }

  void campaign_with_lease(const etcd::LeaseGrant& grant, const std::stop_token& all) {
    std::stop_source lease_stop;
    std::stop_callback link(all, [&] { lease_stop.request_stop(); });
    Status lost_why;
    auto keepalive = etcd::LeaseKeepAlive::start(*client_, grant.id, grant.ttl_seconds, [&](const Status& why) {
      {
        std::lock_guard lock(mu_);
        lost_why = why;
      }
      lease_stop.request_stop();
      cv_.notify_all();
    });
    if (!keepalive) return;
    etcd::Election election(*client_, election_prefix());
    auto won = election.campaign(grant.id, options_.advertise,
                                 std::chrono::steady_clock::now() + std::chrono::hours(24 * 365),
                                 lease_stop.get_token());
    if (!won) return;
    const SteadyTime elected_at = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu_);
      own_key_ = won->key;
      stepped_down_ = false;
    }
    // Catch up: everything etcd holds now must be applied before we serve.
    log::LogIndex target = 0;
    for (;;) {
      if (lease_stop.stop_requested()) return;
      auto highest = log::EtcdLog::highest_index(*client_, options_.prefix());
      if (highest) {
        target = highest->first;
        break;
      }
      sleep_for(std::chrono::milliseconds(50), lease_stop.get_token());
    }
    {
      std::unique_lock lock(mu_);
      while (!lease_stop.stop_requested() && (applied_.load() < target || recovering_.load())) {
        cv_.wait_for(lock, std::chrono::milliseconds(20));
      }
    }
    if (lease_stop.stop_requested()) return;
    const auto catch_up_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - elected_at);
    on_loop([key = *won, target, catch_up_ms](Impl& self) {
      if (self.node_->role() == node::Role::kPrimary) return;
      if (self.recovering_.load()) {
        // A catch-up began after the check above: not caught up; resign.
        {
          std::lock_guard lock(self.mu_);
          self.stepped_down_ = true;
          self.step_down_why_ = Status(ErrorCode::kUnavailable, "elected while catching up the log; campaigning again");
        }
        self.cv_.notify_all();
        return;
      }
      self.log_->set_term(key);
      self.barrier_->set_term(key);
      self.node_->promote();
      self.node_->set_primary_address("", "");
      spdlog::info("promoted to primary key={} term={} caught_up_to={} catch_up_ms={}", key.key,
                   key.create_revision, target, catch_up_ms.count());
    });
    {
      std::unique_lock lock(mu_);
      while (!lease_stop.stop_requested() && !stepped_down_) cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    Status why;
    {
      std::lock_guard lock(mu_);
      why = stepped_down_ ? step_down_why_
                          : (lost_why.is_ok() ? Status(ErrorCode::kUnavailable, "shutting down") : lost_why);
    }
    spdlog::warn("leaving primary role error=\"{}\"", why.to_string());
    on_loop([why](Impl& self) {
      self.log_->set_term(std::nullopt);
      self.barrier_->set_term(std::nullopt);
      self.node_->step_down(why);
      self.apply_held();
      if (self.node_->role() == node::Role::kStandby) {
        self.node_->set_primary_address(
            "", why.code() == ErrorCode::kUnavailable ? why.message() : "stepped down: " + why.message());
      }
    });
    (void)election.resign();
  }

  // ---- Catch-up (docs/cluster.md "Falling behind a compaction"): a standby
  // whose log watch fell behind an etcd compaction, or saw a log gap, reloads
  // the etcd snapshot and the log after it (one read at one revision R), and
  // watches again from R + 1. Runs on catch_up_thread_; the state is changed
  // on the loop thread only. Retries with backoff while etcd is unavailable;
  // gives up (on_fatal) only on corruption.

  Result<std::unique_ptr<etcd::Watcher>> start_log_watch(std::int64_t from_revision, std::uint64_t generation) {
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

  Result<std::unique_ptr<etcd::Watcher>> start_leader_watch() {
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

  // Loop thread: the log watch broke (or a gap): catch up as a standby.
  void request_catch_up(const Status& why) {
    if (recovering_.load()) {
      if (recover_again_.is_ok()) recover_again_ = why;
      return;
    }
    recovering_.store(true);  // from here apply_held() only holds entries
    recovery_why_ = why;
    recovery_from_applied_ = node_->stats().applied_index;
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

  void catch_up_loop() {
    const std::stop_token stop = stop_all_.get_token();
    for (;;) {
      bool catch_up = false;
      bool leader = false;
      {
        std::unique_lock lock(mu_);
        while (!stop.stop_requested() && !catch_up_requested_ && !leader_watch_lost_) {
          cv_.wait_for(lock, std::chrono::milliseconds(50));
        }
        if (stop.stop_requested()) return;
        catch_up = std::exchange(catch_up_requested_, false);
        leader = std::exchange(leader_watch_lost_, false);
      }
      if (leader) restart_leader_watch(stop);
      if (catch_up) run_catch_up(stop);
    }
  }

  void restart_leader_watch(const std::stop_token& stop) {
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

  void run_catch_up(const std::stop_token& stop) {
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

  // Catch-up thread: read, start the new watch, let the loop thread apply.
  Status catch_up_once(int attempt, const std::stop_token& stop) {
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

  // Loop thread: the state becomes the etcd snapshot plus the entries after
  // it (everything up to data.revision); the new watch continues from there.
  Status apply_catch_up(log::EtcdCatchUp& data, const etcd::Watcher& watch, std::uint64_t generation,
                        int attempt) {
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
    const log::LogIndex applied = node_->stats().applied_index;
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

  ClusterOptions options_;
  node::Executor post_;
  FatalHandler on_fatal_;
  std::shared_ptr<LoopState> loop_ = std::make_shared<LoopState>();
  std::shared_ptr<etcd::Client> client_;
  log::EtcdLog* log_ = nullptr;            // owned by the node
  std::unique_ptr<node::Node> owned_node_;  // until take_node()
  node::Node* node_ = nullptr;
  std::atomic<log::LogIndex> applied_{0};
  std::map<log::LogIndex, std::string> held_;  // loop thread: seen on the watch, not applied yet
  // Created by open(); after it, replaced only by the catch-up thread;
  // destroyed by ~Impl after that thread was joined.
  std::unique_ptr<etcd::Watcher> log_watch_;
  std::unique_ptr<etcd::Watcher> leader_watch_;
  std::unique_ptr<ReadBarrier> barrier_;  // loop thread

  std::mutex mu_;
  std::condition_variable cv_;
  std::string own_key_;       // guarded by mu_
  bool stepped_down_ = false; // guarded by mu_
  Status step_down_why_;      // guarded by mu_
  std::stop_source stop_all_;
  std::thread campaign_thread_;

  // Catch-up (see "Catch-up" above): the thread that replaces the watches.
  std::atomic<bool> recovering_{false};  // written on the loop thread
  std::uint64_t watch_generation_ = 0;   // loop thread: the installed log watch
  std::atomic<std::uint64_t> next_generation_{1};
  Status recovery_why_;                  // loop thread
  log::LogIndex recovery_from_applied_ = 0;  // loop thread
  SteadyTime recovery_started_;          // loop thread
  Status recover_again_;                 // loop thread: non-OK = catch up again after this one
  bool catch_up_requested_ = false;      // guarded by mu_
  bool leader_watch_lost_ = false;       // guarded by mu_
  std::thread catch_up_thread_;
};

Result<std::unique_ptr<ClusterMember>> ClusterMember::start(const ClusterOptions& options,
                                                            node::NodeOptions node_options, node::Clock& clock,
                                                            node::Executor post, FatalHandler on_fatal) {
  if (!options.enabled()) return Status(ErrorCode::kInvalidArgument, "cluster mode needs --etcd endpoints");
  if (options.cluster_name.empty() || options.cluster_name.find('/') != std::string::npos) {
    return Status(ErrorCode::kInvalidArgument, "cluster name must be non-empty without '/'");
  }
  if (options.advertise.empty()) return Status(ErrorCode::kInvalidArgument, "cluster mode needs --advertise host:port");
  if (options.lease_ttl_s < 1 || options.lease_ttl_s > 600) {
    return Status(ErrorCode::kInvalidArgument, "etcd lease TTL must be 1..600 s");
  }
  if (!post) return Status(ErrorCode::kInvalidArgument, "cluster member needs an executor");
  auto impl = std::make_unique<Impl>(options, std::move(post), std::move(on_fatal));
  if (Status st = impl->open(std::move(node_options), clock); !st) return st;
  return std::unique_ptr<ClusterMember>(new ClusterMember(std::move(impl)));
}

ClusterMember::ClusterMember(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterMember::~ClusterMember() = default;
std::unique_ptr<node::Node> ClusterMember::take_node() { return impl_->take_node(); }

}  // namespace leasehold::cluster
