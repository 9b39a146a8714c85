// node/node_impl.h: the Node's private state (not part of the public API).
//
// Node::Impl coordinates components that each own one concern's state and
// its invariants (each header states its contract):
//   log_clock.h      LogClock: the log clock (node.h, LOG CLOCK)
//   commit_queue.h   CommitQueue: proposals waiting for an append, linger and defer bounds
//   append_slot.h    AppendSlot: the one append in flight
//   apply_queue.h    ApplyQueue: durable entries applied in steps
//   snapshot_job.h   SnapshotTrigger, SnapshotJob: when a snapshot is due, the one in flight
//   cluster_role.h   ClusterRole: primary or standby, redirects, deferred follows
//   apply_waiters.h  ApplyWaiters: when_applied() callers
//   lease_buffer.h   LeaseBuffer: lease mode's applied-but-unwritten chunks
//   node_lifecycle.h OpenGate, Shutdown: the start's Reopen outcome, stopping
//   node_counters.h  NodeCounters: the counters stats() reports
// The behaviour that ties them together is split by concern: node.cc
// (public forwarding, open/recovery), group_commit.cc (proposals, appends,
// apply), lease_commit.cc (the `lease` durability mode: apply first, write
// behind), snapshots.cc, node_cluster.cc (cluster mode), node_timers.cc
// (effects -> timers, timer proposals), node_shutdown.cc, node_stats.cc.
//
// Thread-safety: loop thread only; log completions, and the bytes of a
// snapshot encoded off the loop (SnapshotJob's encoder), come back via `post_`.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/state_machine.h"
#include "node/append_slot.h"
#include "node/apply_queue.h"
#include "node/apply_waiters.h"
#include "node/cluster_role.h"
#include "node/commit_queue.h"
#include "node/lease_buffer.h"
#include "node/log_clock.h"
#include "node/node.h"
#include "node/node_counters.h"
#include "node/node_lifecycle.h"
#include "node/revision_guard.h"
#include "node/snapshot_job.h"
#include "node/timers.h"

namespace leasehold::node {

class Node::Impl : public std::enable_shared_from_this<Node::Impl> {
 public:
  Impl(NodeOptions options, std::unique_ptr<log::Log> log, Clock& clock, Executor post,
       core::StateMachine state, log::LogIndex applied_index);

  // --- group_commit.cc ---
  void propose(core::Command command, ProposeDone done);
  // --- node_shutdown.cc ---
  void shutdown(std::function<void()> done);
  // --- node_stats.cc ---
  NodeStats stats() const;

  // --- node_timers.cc ---
  void arm_recovered_timers();
  void track_effect(const core::Effect& effect);
  void run_due_timers();
  std::optional<TimePoint> next_timer_deadline() const;

  // --- node_cluster.cc ---
  Status follow(log::LogIndex index, std::string_view batch);
  Status reset_to_snapshot(log::LogIndex index, std::string_view snapshot_bytes);
  void promote();
  void become_standby(const Status& why);
  void when_applied(log::LogIndex index, std::function<void(Status)> done);
  bool is_primary() const { return cluster_.primary(); }

  // --- node.cc ---
  // The start's Reopen was applied (OK) or failed: answers when_opened().
  void finish_opening(Status outcome);
  // Runs `task` on the loop thread later, if this Impl still exists then.
  void post_guarded(std::function<void(Impl&)> task);
  // Answers `done` later (never inside the caller) with an error reply.
  void fail_later(ProposeDone done, ErrorCode code, std::string message);

  // What the node is built from.
  NodeOptions options_;
  std::unique_ptr<log::Log> log_;
  Clock& clock_;
  Executor post_;
  core::StateMachine state_;
  log::LogIndex applied_index_ = 0;  // the last log entry the state holds
  LogClock log_clock_;
  Timers timers_;  // primary only
  EffectListener listener_;
  NodeObserver observer_;

  // Committing and applying.
  CommitQueue queue_;
  AppendSlot append_;
  ApplyQueue applying_;
  LeaseBuffer lease_;  // lease mode only
  // The revision record (embedded mode; node/revision_guard.h).
  std::optional<RevisionGuard> guard_;

  SnapshotTrigger snapshot_due_;
  SnapshotJob snapshot_;
  ClusterRole cluster_;
  ApplyWaiters apply_waiters_;

  std::vector<std::string> start_notices_;
  OpenGate opening_;
  Shutdown shutdown_;
  Status failure_;  // set once the log failed fatally; never cleared
  NodeCounters counters_;

 private:
  // A linger starts only after an append that answered at least this many
  // commands and took at least this many times the linger bound.
  static constexpr std::size_t kLingerMinAnswered = 4;
  static constexpr int kLingerMinAppendRatio = 3;
  // The apply step's clock is read once every this many commands.
  static constexpr std::size_t kApplyStepCheck = 8;
  // An image smaller than this is joined on the loop (cheaper than a thread).
  static constexpr std::size_t kJoinOnLoopBytes = 4U << 20;

  // --- group_commit.cc ---
  bool is_deferrable(const core::Command& command) const;
  void defer(const core::Command& command);
  void schedule_append();
  // Applies one command (log entry `index`; 0 in lease mode, where it is not
  // written yet): the observer, effects to the timers, then `done` (if
  // any), then the effects to the listener.
  core::ApplyResult apply_one(log::LogIndex index, const core::Command& command, ProposeDone* done);
  void start_append();
  bool should_linger(std::size_t answered) const;
  void begin_linger(std::size_t target);
  void end_due_linger();  // starts the lingering append once its bound passed
  void end_due_defer();   // starts the deferred enqueues' append once their bound passed
  void on_appended(Result<log::LogIndex> result);
  void fail_batch(Batch batch, const Status& error);
  // A failure after which the node's state and the log may disagree: stop
  // taking writes for good, failing `batch` (outcome unknown) and the queue.
  void stop_writes(const Status& error, Batch batch);
  // Applies a committed entry: own batches (with dones) and followed ones
  // (no dones; a standby tracks no timers). With `in_steps` (own batches in
  // embedded mode) for at most NodeOptions::apply_step of loop time, the
  // rest in posted steps; otherwise everything applying_ holds, at once.
  void apply_batch(log::LogIndex index, Batch batch, bool in_steps = false);
  // Applies from applying_ until it is empty or `budget` (> 0) is spent;
  // then posts the next step. Finishes each entry (applied_index_, checks).
  void apply_committed(std::chrono::nanoseconds budget);
  void after_apply();  // follows, snapshot and shutdown checks after an apply

  // --- lease_commit.cc ---
  void lease_apply_queued();
  void lease_write();
  // True when the next append may wait for its pace: nothing unwritten
  // holds a reply, no snapshot waits, not shutting down.
  bool lease_write_can_wait() const;
  void end_due_lease_write();
  void on_lease_appended(Result<log::LogIndex> result);

  // --- node_cluster.cc ---
  void drain_deferred_follows();
  // Posts the when_applied() callers the last apply satisfied.
  void release_apply_waiters();

  // --- snapshots.cc ---
  void maybe_snapshot();
  // Encodes the state (at applied_index_) in a forked child; false if the
  // fork failed (then nothing started).
  bool snapshot_in_child();
  // Encodes the next part of the image begun by maybe_snapshot() (chunks of
  // NodeOptions::snapshot_step_sessions for up to NodeOptions::snapshot_step
  // of loop time); posts itself again until it is done.
  void step_snapshot();
  // Streams `pieces` to the log (SnapshotJob::streaming()).
  void stream_snapshot_pieces(std::vector<std::string> pieces);
  // Hands an encoded snapshot at `index` to the log (or fails it).
  void save_snapshot(log::LogIndex index, Result<std::string> bytes);
  void on_snapshot_saved(Status status);

  // --- node_shutdown.cc ---
  void maybe_finish_shutdown();
};

// A snapshot taken at log `index` restored into a state machine; kCorruption
// (naming `where`) when it does not restore. Used by open() and
// reset_to_snapshot().
Result<core::StateMachine> restore_snapshot(log::LogIndex index, std::string_view bytes, const core::Limits& limits,
                                            const std::string& where);

}  // namespace leasehold::node
