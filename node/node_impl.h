// node/node_impl.h: the Node's private state (not part of the public API).
//
// Split by concern: node.cc (public forwarding, open/recovery, log clock),
// group_commit.cc (proposals, appends, apply), snapshots.cc (snapshots),
// node_shutdown.cc (shutdown), node_stats.cc (stats),
// lease_commit.cc (the `lease` durability mode: apply first, write behind),
// node_timers.cc (effects -> timers, timer proposals).
// Thread-safety: loop thread only; log completions, and the bytes of a
// snapshot encoded in a child (snapshot_encoder_), come back via `post_`.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/state_machine.h"
#include "node/node.h"
#include "node/timers.h"

namespace leasehold::node {

class Node::Impl : public std::enable_shared_from_this<Node::Impl> {
 public:
  Impl(NodeOptions options, std::unique_ptr<log::Log> log, Clock& clock, Executor post,
       core::StateMachine state, log::LogIndex applied_index);

  // --- node.cc: log clock ---
  core::LogMillis log_now() const;
  core::LogMillis stamp();
  TimePoint steady_of(core::LogMillis at) const;

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

  // Runs `task` on the loop thread later, if this Impl still exists then.
  void post_guarded(std::function<void(Impl&)> task);
  // Answers `done` later (never inside the caller) with an error reply.
  void fail_later(ProposeDone done, ErrorCode code, std::string message);

  NodeOptions options_;
  std::unique_ptr<log::Log> log_;
  Clock& clock_;
  Executor post_;
  core::StateMachine state_;
  Timers timers_;
  EffectListener listener_;
  NodeObserver observer_;

  // Log clock: base_log_ at base_steady_, advancing with the clock.
  TimePoint base_steady_;
  core::LogMillis base_log_ = 0;
  core::LogMillis last_stamp_ = 0;

  // Group commit.
  struct Batch {
    std::vector<core::Command> commands;
    std::vector<ProposeDone> dones;
    std::size_t bytes = 0;
  };
  struct Queued {
    core::Command command;
    ProposeDone done;
    std::size_t bytes = 0;
    bool deferred = false;  // an enqueue that waits for company (enqueue_defer)
  };
  std::deque<Queued> queued_;
  std::string encode_scratch_;  // propose(): a command's encoded size without an allocation each
  static constexpr std::size_t kScratchKeepBytes = 64u << 10;  // a larger scratch is not kept
  Batch in_flight_;
  bool append_in_flight_ = false;
  bool append_scheduled_ = false;  // a start_append task is posted (group_commit.cc)
  // Commit linger (NodeOptions::commit_linger): the next append waits until
  // linger_target_ proposals are queued or linger_until_ passed.
  std::optional<TimePoint> linger_until_;
  std::size_t linger_target_ = 0;
  // Deferred enqueues (NodeOptions::enqueue_defer): queued_ proposals that
  // are not deferred, and the bound by which deferred ones start an append.
  std::size_t urgent_queued_ = 0;
  std::optional<TimePoint> defer_until_;
  bool is_deferrable(const core::Command& command) const;
  void defer(const core::Command& command);
  TimePoint append_started_{};
  std::chrono::steady_clock::duration last_append_latency_{};
  // A linger starts only after an append that answered at least this many
  // commands and took at least this many times the linger bound.
  static constexpr std::size_t kLingerMinAnswered = 4;
  static constexpr int kLingerMinAppendRatio = 3;
  log::LogIndex applied_index_ = 0;
  // Apply in steps (NodeOptions::apply_step): durable entries not yet fully
  // applied, in log order; the front one is applied from `next` on.
  struct Committed {
    log::LogIndex index = 0;
    Batch batch;
    std::size_t next = 0;
  };
  std::deque<Committed> committed_;
  std::size_t unapplied_commands_ = 0;  // in committed_, not yet applied
  bool apply_step_posted_ = false;
  std::uint64_t apply_steps_deferred_ = 0;  // continuations posted (stats)
  // The step's clock is read once every this many commands.
  static constexpr std::size_t kApplyStepCheck = 8;
  // True while a batch is partly applied: the state is then between two log
  // entries (no snapshot can be labelled with an index).
  bool mid_batch() const { return !committed_.empty() && committed_.front().next > 0; }

  // Snapshots.
  bool snapshot_in_flight_ = false;
  log::LogIndex snapshot_index_ = 0;  // the index of the image being encoded in steps
  // When the log streams snapshots (log::Log::streams_snapshots()), each
  // step's pieces go to it at once, so the image is never whole in memory;
  // the checksum of the pieces streamed so far.
  bool snapshot_streaming_ = false;
  std::uint32_t snapshot_stream_crc_ = 0;
  // An image smaller than this is joined on the loop (cheaper than a thread).
  static constexpr std::size_t kJoinOnLoopBytes = 4U << 20;
  // Waits for a snapshot child (NodeOptions::snapshot_in_child), or joins a
  // large image encoded in steps, and posts the bytes back; joined before
  // the next one starts and on destruction.
  std::jthread snapshot_encoder_;
  std::uint64_t commands_since_snapshot_ = 0;
  std::uint64_t bytes_since_snapshot_ = 0;
  Status last_snapshot_error_;

  // Stats.
  std::uint64_t batches_committed_ = 0;
  std::uint64_t commands_committed_ = 0;
  std::uint64_t snapshots_saved_ = 0;
  std::uint64_t snapshot_steps_ = 0;
  std::uint64_t replayed_entries_ = 0;

  // Cluster mode (node_cluster.cc).
  Status follow(log::LogIndex index, std::string_view batch);
  Status reset_to_snapshot(log::LogIndex index, std::string_view snapshot_bytes);
  void promote();
  void become_standby(const Status& why);
  void drain_deferred_follows();
  bool is_primary() const { return role_ == Role::kPrimary; }
  Status standby_refusal() const;
  Role role_ = Role::kPrimary;
  std::string primary_address_;
  std::string unavailable_reason_ = "no primary elected";
  std::function<void(const Status&)> step_down_listener_;
  std::function<void(std::function<void(Status)>)> read_barrier_;
  std::deque<std::pair<log::LogIndex, std::string>> deferred_follows_;
  std::uint64_t catch_up_recoveries_ = 0;  // reset_to_snapshot() successes
  std::uint64_t promotions_ = 0;
  std::uint64_t step_downs_ = 0;
  // when_applied(): waiters by index; released after each apply (own
  // batches in group_commit.cc, followed entries), failed on step down.
  void when_applied(log::LogIndex index, std::function<void(Status)> done);
  void release_apply_waiters();
  std::multimap<log::LogIndex, std::function<void(Status)>> apply_waiters_;

  // Lease mode (NodeOptions::acknowledge_before_durable, lease_commit.cc):
  // applied and answered commands not yet durable, in apply order. A chunk
  // is what one apply round took; an append writes several chunks at once.
  struct LeaseChunk {
    std::vector<core::Command> commands;
    std::size_t bytes = 0;
    core::Revision revision_after = 0;  // the state's revision after the chunk
    // Replies held until the chunk is durable (FENCE.PUT: fenced data stays
    // durable before it is acknowledged in every mode).
    std::vector<std::pair<ProposeDone, core::ApplyResult>> held_replies;
  };
  std::deque<LeaseChunk> unwritten_;
  std::vector<LeaseChunk> writing_;     // the append in flight
  std::size_t unwritten_commands_ = 0;  // in unwritten_ and writing_
  std::size_t writing_commands_ = 0;    // in writing_
  core::Revision durable_revision_ = 0; // the state's revision the log holds durably
  // Fenced keys whose value in state_ comes from a FENCE.PUT applied but not
  // yet durable: the value before the first such put (nullopt: none), shown
  // by fence_get() until the revision of the last one is durable.
  struct UndurableFence {
    std::optional<core::FencedValue> durable;
    core::Revision last_put = 0;
  };
  std::map<std::string, UndurableFence, std::less<>> undurable_fences_;
  bool hold_for_snapshot_ = false;      // applies wait until the log caught up
  // When the paced next append may start (NodeOptions::lease_write_interval).
  std::optional<TimePoint> lease_write_at_;
  void lease_apply_queued();
  void lease_write();
  // True when the next append may wait for its pace: nothing unwritten
  // holds a reply, no snapshot waits, not shutting down.
  bool lease_write_can_wait() const;
  void end_due_lease_write();
  void on_lease_appended(Result<log::LogIndex> result);

  // The revision record (embedded mode; node/revision_guard.h).
  std::optional<RevisionGuard> guard_;
  std::vector<std::string> start_notices_;
  // The end of the quarantine this start's Reopen sets (log time; 0 = none).
  // The same value its apply puts in StateMachine::paused_until().
  core::LogMillis reopen_quarantine_until_ = 0;
  // The outcome of this start's Reopen: set at open() when there is none,
  // else once it is applied (OK) or failed; Node::when_opened waits for it.
  std::optional<Status> opened_;
  std::vector<std::function<void(Status)>> opened_waiters_;
  void finish_opening(Status outcome);

  // Stopping.
  Status failure_;  // set once the log failed fatally; never cleared
  bool shutting_down_ = false;
  bool shutdown_complete_ = false;
  std::vector<std::function<void()>> shutdown_waiters_;

 private:
  void schedule_append();
  // Up to max_batch_commands / max_batch_bytes from the front of queued_.
  Batch take_queued_batch();
  // Applies one command (log entry `index`; 0 in lease mode, where it is not
  // written yet): the observer, effects to the timers, then `done` (if
  // any), then the effects to the listener.
  core::ApplyResult apply_one(log::LogIndex index, const core::Command& command, ProposeDone* done);
  void start_append();
  bool should_linger(std::size_t answered) const;
  void begin_linger(std::size_t target);
  void end_due_linger();  // starts the lingering append once its bound passed
  void end_due_defer();   // starts the deferred enqueues' append once their bound passed
  void clear_queue_counters();  // queued_ was emptied without an append
  void on_appended(Result<log::LogIndex> result);
  void fail_batch(Batch batch, const Status& error);
  // A failure after which the node's state and the log may disagree: stop
  // taking writes for good, failing `batch` (outcome unknown) and the queue.
  void stop_writes(const Status& error, Batch batch);
  // Applies a committed entry: own batches (with dones) and followed ones
  // (no dones; a standby tracks no timers). With `in_steps` (own batches in
  // embedded mode) for at most NodeOptions::apply_step of loop time, the
  // rest in posted steps; otherwise everything committed_ holds, at once.
  void apply_batch(log::LogIndex index, Batch batch, bool in_steps = false);
  // Applies from committed_ until it is empty or `budget` (> 0) is spent;
  // then posts the next step. Finishes each entry (applied_index_, checks).
  void apply_committed(std::chrono::nanoseconds budget);
  void after_apply();  // follows, snapshot and shutdown checks after an apply
  void maybe_snapshot();
  // Encodes the state (at applied_index_) in a forked child; false if the
  // fork failed (then nothing started).
  bool snapshot_in_child();
  // Encodes the next part of the image begun by maybe_snapshot() (chunks of
  // NodeOptions::snapshot_step_sessions for up to NodeOptions::snapshot_step
  // of loop time); posts itself again until it is done.
  void step_snapshot();
  // Streams `pieces` to the log (snapshot_streaming_).
  void stream_snapshot_pieces(std::vector<std::string> pieces);
  // Hands an encoded snapshot at `index` to the log (or fails it).
  void save_snapshot(log::LogIndex index, Result<std::string> bytes);
  void on_snapshot_saved(Status status);
  void maybe_finish_shutdown();
};

// A snapshot taken at log `index` restored into a state machine; kCorruption
// (naming `where`) when it does not restore. Used by open() and
// reset_to_snapshot().
Result<core::StateMachine> restore_snapshot(log::LogIndex index, std::string_view bytes, const core::Limits& limits,
                                            const std::string& where);

}  // namespace leasehold::node
