// cluster/cluster_member_impl.h: ClusterMember::Impl, private to cluster/
// (what the member does: cluster/cluster_member.h). One class in three files:
//  - cluster_member.cc:   open (recovery), the follow path (on_log_events,
//                         apply_held), refresh_leader, on_node_stepped_down;
//  - cluster_campaign.cc: election, catch up to etcd's highest index before
//                         promotion, step down (campaign_loop, campaign_with_lease);
//  - cluster_catch_up.cc: the watches, and the reload from etcd after a
//                         compaction or a log gap ("Catch-up" below).
//
// Threads and what they touch:
//  - loop thread (the node's Executor): the constructor, open(), take_node(),
//    the destructor, every on_loop() task and every method marked "Loop
//    thread". It alone touches the node, held_, barrier_, the log's term,
//    watch_generation_ and the recovery state, and writes applied_ and
//    recovering_ (atomics the other threads read).
//  - campaign thread (campaign_thread_): lease, election, promotion wait;
//    own_key_, stepped_down_ and step_down_why_ under mu_. It changes the
//    node only through on_loop().
//  - catch-up thread (catch_up_thread_): after open(), the only one that
//    replaces, drops or restarts log_watch_ and leader_watch_; reads etcd
//    and hands the result to the loop thread, waiting for its answer on
//    cv_. Also re-reads the leader when asked (request_leader_refresh).
//  - etcd watch and keepalive threads (their callbacks): post to the loop
//    thread, or set flags under mu_ and notify cv_.
// mu_/cv_ are shared by all of them; cv_ is notified when applied_ advances
// while the campaign thread waits for it (promotion_waiting_), on a
// step-down, a catch-up request, a lost watch and at stop. A task posted
// by on_loop() does nothing once the Impl is destroyed (loop_->alive).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_member.h"
#include "cluster/read_barrier.h"
#include "etcd/client.h"
#include "etcd/types.h"
#include "etcd/watcher.h"
#include "leasehold/status.h"
#include "log/etcd_log.h"
#include "node/node.h"

namespace leasehold::cluster {

class ClusterMember::Impl {
 public:
  Impl(ClusterOptions options, node::Executor post, FatalHandler on_fatal);
  // Stops and joins the campaign and catch-up threads, then drops the
  // watches and the read barrier; a node not taken yet is destroyed after.
  ~Impl();

  // Loop thread: recovers the node from etcd, starts the watches and the
  // campaign and catch-up threads (ClusterMember::start).
  Status open(node::NodeOptions node_options, node::Clock& clock);
  std::unique_ptr<node::Node> take_node();
  // Loop thread: see ClusterMember::primary_tls_address.
  std::string primary_tls_address(const std::string& primary) const;
  // Any thread: see ClusterMember::reload_etcd_password.
  Status reload_etcd_password();
  // Any thread: see ClusterMember::campaign_status.
  CampaignStatus campaign_status() const;

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;

  struct LoopState {
    bool alive = true;  // loop thread only
  };

  // ---- Member (cluster_member.cc)
  std::string election_prefix() const;
  // Any thread: runs task on the loop thread, unless the Impl is gone by then.
  void on_loop(std::function<void(Impl&)> task);
  // Any thread: on_fatal_ on the loop thread.
  void fatal_later(Status why);
  // Watch thread: entries of the log, in revision order.
  void on_log_events(const std::vector<etcd::WatchEvent>& events);
  // Loop thread: applies the entries seen on the watch. A primary applies
  // its own appends itself, so it only keeps what it has not applied yet
  // (its own append in flight, or entries of a newer primary that deposed
  // it) and applies those once it is a standby.
  void apply_held();
  // Loop thread: applied_ = the node's applied index now (it also advances
  // without a watch event: an own append that completes after a step-down).
  void refresh_applied();
  // Any thread: reads who leads now and hands it to the loop thread, where a
  // standby takes it as its redirect target (Node::set_primary_address).
  // Reads are numbered as they start and the loop thread applies a read only
  // if no later-started one was applied before it: every change of the
  // election starts a read after it (the leader watch), so the last read
  // applied has seen the last change. A failed read (etcd unreachable) says
  // so to clients and asks the catch-up thread to read again after
  // kLeaderRetry, so a standby never stays without its primary's address
  // once etcd answers again, whether or not the election changes.
  void refresh_leader();
  // Any thread: the catch-up thread calls refresh_leader() once `after` has
  // passed (the earliest of pending requests wins).
  void request_leader_refresh(std::chrono::milliseconds after);
  static constexpr std::chrono::milliseconds kLeaderRetry{250};
  // Loop thread: an append failed (deposed / outcome unknown).
  void on_node_stepped_down(const Status& why);
  // Loop thread, after node_ stepped down (either way above): forgets the
  // term in the log and the read barrier; clients are told `why` until a
  // fresh read of the election, requested here, names who leads after us.
  // Asks for the log and leader watches back (want_standby_watches).
  void leave_primary_role(const Status& why);

  // ---- Campaign (cluster_campaign.cc): campaign thread (sleep_for also on
  // the catch-up thread).
  // Waits d, or less if stop is requested; false if it was.
  bool sleep_for(std::chrono::milliseconds d, const std::stop_token& stop);
  // Grants a lease and campaigns with it, again and again until ~Impl.
  void campaign_loop();
  // One lease: elected, catch up to the highest index in etcd, promote;
  // when the lease is lost or the node stepped down, step down and resign.
  void campaign_with_lease(const etcd::LeaseGrant& grant, const std::stop_token& all);
  // Campaign thread: records the phase (campaign_status()).
  void set_phase(CampaignStatus::Phase phase, std::string detail);
  // Campaign thread: revokes `lease`; keeps it for a later try when etcd
  // did not answer (anything but OK / kNotFound).
  void revoke_or_keep(std::int64_t lease);
  // Campaign thread: revokes the kept leases (etcd just answered a grant).
  void revoke_abandoned();

  // ---- Catch-up (cluster_catch_up.cc; docs/cluster.md "Falling behind a
  // compaction"): a standby whose log watch fell behind an etcd compaction,
  // or saw a log gap, reloads the etcd snapshot and the log after it (one
  // read at one revision R), and watches again from R + 1. Runs on
  // catch_up_thread_; the state is changed on the loop thread only. Retries
  // with backoff while etcd is unavailable; gives up (on_fatal) only on
  // corruption.
  Result<std::unique_ptr<etcd::Watcher>> start_log_watch(std::int64_t from_revision, std::uint64_t generation);
  Result<std::unique_ptr<etcd::Watcher>> start_leader_watch();
  // Loop thread: the log watch broke (or a gap): catch up as a standby.
  void request_catch_up(const Status& why);
  // Catch-up thread: waits for a catch-up request, a lost leader watch, a
  // due leader refresh or a change of want_standby_watches_.
  void catch_up_loop();
  // Catch-up thread: replaces the leader watch until one starts (backing
  // off while etcd is unavailable), then reads the leader.
  void restart_leader_watch(const std::stop_token& stop);
  void run_catch_up(const std::stop_token& stop);
  // Catch-up thread: runs `task` on the loop thread and waits for its
  // Status; nullopt when `stop` is requested first. The task then never
  // runs: only ~Impl requests the stop, on the loop thread, and it ends
  // with loop_->alive = false. So the task may point at what the waiting
  // thread owns (a new watcher) for as long as the wait lasts.
  std::optional<Status> on_loop_and_wait(std::function<Status(Impl&)> task, const std::stop_token& stop);
  // Catch-up thread: read, start the new watch, let the loop thread apply.
  Status catch_up_once(int attempt, const std::stop_token& stop);

  // ---- The primary's watches (cluster_catch_up.cc; docs/cluster.md "The
  // log watch"). A primary applies its own appends, so it does not watch
  // the log: every entry would come back to it as an event that etcd
  // encodes and sends and the node decodes and drops (etcd's CPU per txn
  // fell 14% without it). Nor does it watch the election: it knows it
  // leads, and learns
  // that it no longer does from its lease or a refused append, never from
  // the leader watch (refresh_leader ignores its reads on a primary). Each
  // watch is one more thread blocked in gRPC, and those take turns as its
  // poller, and every turn is a context switch. The loop thread says what
  // it wants
  // (want_standby_watches_: false from promotion to step-down); the
  // catch-up thread makes it so.
  // Loop thread: asks for both watches to be dropped (promotion) or back.
  void want_standby_watches(bool want);
  // Catch-up thread, like set_log_watch: replaces leader_watch_ and
  // publishes whether one runs (CampaignStatus::leader_watch).
  void set_leader_watch(std::unique_ptr<etcd::Watcher> watch);
  // Catch-up thread: drops the leader watch while the node is primary;
  // otherwise restarts it when it was lost or dropped (reading the leader
  // too). Returns whether it read the leader.
  bool reconcile_leader_watch(bool lost, const std::stop_token& stop);
  // open(), then the catch-up thread: replaces log_watch_ (nullptr: none)
  // and publishes whether one runs (CampaignStatus::log_watch).
  void set_log_watch(std::unique_ptr<etcd::Watcher> watch);
  // Catch-up thread: drops the watch, or starts it again from the revision
  // after the last entry this node has seen or written:
  // max(log_watch_dropped_at_, the log's last_append_revision() + 1).
  // Every entry of another node after this node's own appends has a higher
  // revision than those, so nothing is skipped; entries seen twice are
  // dropped by index. A failed start falls back to the catch-up.
  void reconcile_log_watch(const std::stop_token& stop);
  // Loop thread: the state becomes the etcd snapshot plus the entries after
  // it (everything up to data.revision); the new watch continues from there.
  Status apply_catch_up(log::EtcdCatchUp& data, const etcd::Watcher& watch, std::uint64_t generation, int attempt);

  ClusterOptions options_;
  node::Executor post_;
  FatalHandler on_fatal_;
  std::shared_ptr<LoopState> loop_ = std::make_shared<LoopState>();
  std::shared_ptr<etcd::Client> client_;
  log::EtcdLog* log_ = nullptr;            // owned by the node
  std::unique_ptr<node::Node> owned_node_;  // until take_node()
  node::Node* node_ = nullptr;
  std::atomic<log::LogIndex> applied_{0};
  // Campaign thread: set while it waits for applied_ to reach its target
  // before promotion. Both sides use sequentially consistent order: the
  // waiter sets it before reading applied_, the loop stores applied_ before
  // reading it, so one of them sees the other (and the wait is bounded).
  std::atomic<bool> promotion_waiting_{false};
  std::map<log::LogIndex, std::string> held_;  // loop thread: seen on the watch, not applied yet
  // Created by open(); after it, replaced only by the catch-up thread;
  // destroyed by ~Impl after that thread was joined.
  std::unique_ptr<etcd::Watcher> log_watch_;
  std::unique_ptr<etcd::Watcher> leader_watch_;
  std::unique_ptr<ReadBarrier> barrier_;  // loop thread
  std::string leader_plain_;              // loop thread: the redirect target (Node::primary_address)
  std::string leader_tls_;                // loop thread: its TLS address, "" = none
  std::atomic<std::uint64_t> leader_reads_{0};  // refresh_leader() reads started
  std::uint64_t leader_read_applied_ = 0;       // loop thread: the newest read applied

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string own_key_;       // guarded by mu_
  CampaignStatus::Phase phase_ = CampaignStatus::Phase::kNoLease;  // guarded by mu_
  std::string phase_detail_;                                       // guarded by mu_
  SteadyTime phase_since_ = std::chrono::steady_clock::now();      // guarded by mu_
  std::vector<std::int64_t> abandoned_leases_;  // guarded by mu_ (changed by the campaign thread)
  std::uint64_t abandoned_leases_revoked_ = 0;  // guarded by mu_
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
  bool want_standby_watches_ = true;     // guarded by mu_ (written on the loop thread)
  bool log_watch_running_ = false;       // guarded by mu_: log_watch_ != nullptr
  bool log_watch_change_requested_ = false;  // guarded by mu_
  bool log_watch_dropped_ = false;           // catch-up thread
  std::int64_t log_watch_dropped_at_ = 0;    // catch-up thread: next_revision() of the dropped watch
  bool leader_watch_lost_ = false;       // guarded by mu_
  bool leader_watch_running_ = false;    // guarded by mu_: leader_watch_ != nullptr
  bool leader_refresh_requested_ = false;  // guarded by mu_
  SteadyTime leader_refresh_due_;          // guarded by mu_: when the requested refresh may run
  std::thread catch_up_thread_;
};

}  // namespace leasehold::cluster
