// node/node.h: a leasehold node: the lock state machine over a durable log.
//
// The node turns proposals into log appends and applies them, in log order,
// to the core state machine once they are durable. It owns the primary's
// timers (session expiry, wait deadlines, lock-delays), keepalives (in memory,
// no log write) and snapshots. It does no I/O and reads no clock itself: the
// Log does the storage, the Clock gives time, the Executor runs work on the
// loop thread (node/clock.h).
//
// ROLES: in embedded mode (a local RocksDB log) the node is always primary,
// with the durable revision record (NodeOptions::revision_guard,
// node/revision_guard.h).
// In cluster mode (NodeOptions::cluster_mode, the log in etcd) it opens as a
// standby that follows another node's appends, and cluster/ promotes it
// (promote()) or makes it step down (step_down(), or by itself when an
// append fails); see the "Cluster mode only" section below.
//
// THREADING: one thread (the "loop thread") calls every method, and every
// callback (ProposeDone, EffectListener, shutdown/read_barrier done) runs on
// that thread, from a task run by the Executor, never inside the call that
// registered it. Log completions arrive on the log's thread and are handed
// back through the Executor. Destroy the Node on the loop thread, after
// shutdown()'s done ran (destroying it from inside that done is fine);
// proposals still pending at destruction are dropped without a call.
//
// GROUP COMMIT: one log append is in flight at a time. Proposals that arrive
// while it is in flight form the next batch (up to max_batch_commands /
// max_batch_bytes). When an append is synced, its commands are applied in
// order; for each command: apply, then its ProposeDone, then its effects to
// the effect listener. So a reply is sent only after its command is durable
// and applied. The loop keeps reading while an append syncs (a loop that
// waited for the sync, as Redis does, measured 0.72x on W1), and sleeps in
// poll meanwhile (one that spun while a small append was in flight gained
// at most 1.10x on W2 for 71-157% more CPU per command on 2 shared cores).
//
// LOG CLOCK: propose() stamps Command::now with the log clock, in ms: it
// continues from the highest value in the log (StateMachine::last_now()) at
// open and advances with the Clock, so it never goes backwards, also across
// restarts. Time spent down is not counted on it.
//
// TIMERS: the node proposes, by itself, ExpireSession when a session's
// deadline (last keepalive or open + TTL, on the Clock) passed, TimeoutWait
// when a queued wait's deadline passed, and Tick when a lock-delay ended. The
// owner drives them: after any call into the node and after every posted task
// ran, re-read next_timer_deadline() and arrange for run_due_timers() to be
// called at (or after) that time (libuv: a uv_prepare handle that re-arms one
// uv_timer). Calling run_due_timers() early or often is harmless.
//
// RESTART BOUND: after open() every live session gets its FULL TTL again,
// counted from open (keepalives are not logged, so the last one is unknown).
// A session whose holder died just before a crash is therefore expired at most
// (downtime + TTL) after its last keepalive, never earlier than the old
// process would have. Wait deadlines and lock-delays are kept on the log
// clock, so their remaining time at the crash is kept (downtime not counted).
//
// ERRORS: a proposal that cannot be committed is answered (ProposeDone) with
// Reply{kError} and no effects and is not applied:
//   kUnavailable  shutting down; the log cannot serve now (retry later)
//   kLimitExceeded more than max_pending_proposals waiting, or one command
//                  larger than max_batch_bytes
//   kIoError/kCorruption/kInternal  the log failed. The OUTCOME IS UNKNOWN (the
//                  failed write may reappear after a restart; retry with the
//                  same (session, seq) after restart is safe). The node then
//                  STOPS taking writes for good (every later proposal gets
//                  kUnavailable "node stopped: <cause>"); reads keep working.
//                  stats().failure holds the cause; the process should restart.
//   kConflict     the log says this node is no longer primary (etcd backend).
// Errors of the state machine itself (kNotHolder, ...) are ordinary replies.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/command.h"
#include "core/reply.h"
#include "core/state_machine.h"
#include "core/types.h"
#include "leasehold/status.h"
#include "log/log.h"
#include "node/clock.h"
#include "node/revision_guard.h"

namespace leasehold::node {

enum class Role : std::uint8_t { kPrimary = 0, kStandby = 1 };
// "primary" / "standby"
std::string_view role_name(Role role);

struct NodeOptions {
  core::Limits limits{};
  // Group commit: a batch holds at most this many commands / encoded bytes.
  std::size_t max_batch_commands = 1024;
  std::size_t max_batch_bytes = 4u << 20;
  // Proposals waiting (queued + in flight) beyond this are refused (kLimitExceeded).
  std::size_t max_pending_proposals = 100'000;
  // Take a snapshot after this many applied commands or encoded bytes since
  // the last one (0 disables that trigger). One snapshot is in flight at a time;
  // one that came due meanwhile starts when it finishes.
  std::uint64_t snapshot_every_commands = 100'000;
  std::uint64_t snapshot_every_bytes = 64u << 20;
  // Where a snapshot is encoded. false: on the loop thread, in steps
  // (snapshot_step below; core/state_machine.h, begin_snapshot): the loop
  // serves clients and applies commands between the steps, and a
  // session changed before its step is copied first; only the locks and
  // keys are encoded in one go, at the start. true: in
  // a forked child (node/snapshot_child.h) that encodes a copy-on-write image
  // of the state at the snapshot's index while the loop goes on; the loop
  // pays for fork() (copying page tables) and, while the child lives, a
  // copy-on-write fault for each page it first writes. The same bytes
  // either way; a failed fork falls back to the loop thread; a helper
  // thread hands the child's bytes to the log. Off by default (also in the
  // server, --snapshot-in-child): where those faults are slow (this project's
  // test VM: ~95 us per page) it made the loop slower than encoding in place
  // (docs/log-and-node.md, "Snapshots").
  bool snapshot_in_child = false;
  // STEPS OF AN IN-PLACE SNAPSHOT. Sessions are encoded in chunks of
  // snapshot_step_sessions. snapshot_step = 0: one chunk per loop task.
  // Otherwise a task encodes chunks until about this much loop time has
  // passed (checked after each chunk), then posts the rest. A fixed count
  // was the wrong bound: a session costs ~0.1 us at 100k sessions but
  // ~0.8 us at 10M (a cache and TLB miss per lookup), so 10,000 sessions
  // per step held the loop 8 ms at 10M sessions. The
  // server's default is 2 ms (--snapshot-step-us).
  std::size_t snapshot_step_sessions = 1'000;
  std::chrono::nanoseconds snapshot_step{0};
  // A timer proposal (ExpireSession/TimeoutWait/Tick) that failed with a
  // retryable error is proposed again after this long.
  std::chrono::milliseconds timer_retry{100};
  // COMMIT LINGER (0 = off). When an append completes while proposals are
  // queued, the next append normally starts at once with just those; the
  // clients answered by the completed append then land one batch later, and
  // a closed-loop load splits into two half-size batches that alternate.
  // With a linger, the next append waits until as many proposals are queued
  // as were queued plus answered (the clients are expected back), or until
  // this long passed, whichever comes first. It never delays a proposal
  // arriving at an idle node, and never more than this bound. It is skipped
  // when the append answered fewer than 4 commands (a hand-off chain) or
  // took less than 3x the bound (a fast local fsync: waiting costs more than
  // it gathers). The server's default is 200 us (--commit-linger-us). The deadline
  // is part of next_timer_deadline() (sub-millisecond: the owner's timer
  // must honour it, e.g. a timerfd).
  std::chrono::microseconds commit_linger{0};
  // DEFERRED ENQUEUES (0 = off). A blocking LOCK.ACQUIRE that would queue
  // behind the lock's holders or waiters is answered only by its grant, so
  // it need not start an append of its own: it stays in the proposal queue
  // (its place kept) and rides with the next append that anything else
  // starts, usually the release that frees the lock, or starts one itself
  // once this bound (or its own WAIT deadline, if sooner) passed. A FIFO
  // hand-off then costs one durable write instead of two (the releasing
  // client's next enqueue no longer takes a commit of its own ahead of the
  // next release). Nothing else changes: order, SEQ idempotence and what a
  // standby applies are the same; the waiter shows in LOCK.INFO, and its
  // WAIT timeout is acted on, up to this bound later. The server's default
  // is 5 ms (--enqueue-defer-us); part of next_timer_deadline() like the linger.
  std::chrono::microseconds enqueue_defer{0};
  // APPLY IN STEPS (0 = off: a committed batch is applied in one go). Once
  // its append is durable, a batch is applied and its clients answered in
  // steps of at most about this much loop time (checked every
  // kApplyStepCheck commands); between two steps the loop serves other
  // clients and timers, so a batch of 1,024 slow commands (10M sessions:
  // ~40 us each, cache misses) no longer holds the loop for 40 ms. Batches
  // still apply whole and in log order before the next one; a snapshot
  // waits for a batch boundary; shutdown waits until all are applied;
  // commands committed but not yet applied count as pending proposals. The
  // server's default is 2 ms (--apply-step-us). Embedded mode only: a
  // cluster node applies at once (its standby path follows the same log).
  std::chrono::nanoseconds apply_step{0};
  // Cluster mode (cluster/, docs/cluster.md): the node opens as a STANDBY
  // (no timers, proposals redirected) and follows a log another node
  // appends; an append that fails with kConflict (deposed) or kUnavailable
  // (etcd unreachable, outcome unknown) makes it step down instead of
  // stopping. Embedded nodes leave this false.
  bool cluster_mode = false;
  // DURABILITY. false (`fsync`, the default): a command is answered after
  // the append that holds it is synced (GROUP COMMIT above). true (`lease`,
  // embedded mode only, node/lease_commit.cc): commands are applied and
  // answered as soon as the loop reaches them and written and fsynced
  // behind, one append at a time; only FencePut replies wait until durable.
  // A crash loses what was answered but not yet written; the revision guard
  // (required with it) then starts above every revision handed out, expires
  // every session and grants nothing for the longest TTL in use.
  bool acknowledge_before_durable = false;
  // Lease mode: the least time from the start of one background append to
  // the start of the next (0 = back to back). Under load this bounds the
  // fsyncs to 1 / interval per second, each carrying everything applied
  // meanwhile; it widens only the window a crash loses (which the
  // quarantine covers), never a reply's wait. Written at once regardless:
  // a chunk holding a FencePut reply, a due snapshot, and shutdown. Part of
  // next_timer_deadline() like the linger. Back to back, the log thread's
  // fsyncs took the cores from the loop; pacing them cut lease W1's CPU
  // per command by 23%.
  std::chrono::microseconds lease_write_interval{5000};
  // Embedded mode: the durable revision record (node/revision_guard.h). At
  // open the node plans its start from it (and refuses a log that lost
  // data); while it runs it keeps the record ahead of every revision it can
  // hand out; a clean shutdown marks it clean. nullopt: no record (tests of
  // other parts, and cluster mode, where etcd holds the log).
  std::optional<RevisionGuardOptions> revision_guard;
};

struct NodeStats {
  Role role = Role::kPrimary;
  core::Revision applied_revision = 0;  // state machine revision
  log::LogIndex applied_index = 0;      // last log entry applied
  log::Position log;                    // the log's own view (first/last/snapshot)
  std::uint64_t batches_committed = 0;  // appends synced and applied since open
  std::uint64_t commands_committed = 0; // commands in those batches
  double average_batch_commands = 0;    // commands_committed / batches_committed
  std::size_t pending_proposals = 0;    // queued + in flight + committed not yet applied
  std::uint64_t apply_steps_deferred = 0; // apply steps run in a later loop turn (NodeOptions::apply_step)
  std::uint64_t snapshots_saved = 0;    // since open
  std::uint64_t snapshot_steps = 0;     // loop tasks that encoded part of an in-place snapshot, since open
  Status snapshot_error;                // the last snapshot's failure; OK once one succeeds again
  std::uint64_t replayed_entries = 0;   // log entries replayed at open
  std::size_t timed_sessions = 0;       // sessions with a running expiry timer
  std::uint64_t catch_up_recoveries = 0; // cluster: reset_to_snapshot() calls that succeeded
  // The revision record (embedded mode; 0 without one).
  std::uint64_t reserved_revision = 0;   // no revision above this is handed out
  std::uint64_t revision_record_writes = 0;  // since open
  core::LogMillis quarantine_until = 0;  // a Reopen quarantine in force until this log time (0 = none)
  std::uint64_t quarantine_remaining_ms = 0;  // quarantine_until - log_now() (0 = none)
  std::uint64_t promotions = 0;         // cluster: standby -> primary since open
  std::uint64_t step_downs = 0;         // cluster: primary -> standby since open
  Status failure;                       // non-OK once the node stopped taking writes
};

// Read-only hooks for metrics and the audit history
// (server/observability/observability.h wires them to
// server/observability/metrics.h and server/observability/history_store.h).
// Called on the loop thread; they must not call
// back into the node except its const queries. Either may be empty.
struct NodeObserver {
  // After each command is applied (own batches and followed entries), before
  // its ProposeDone and before its effects reach the effect listener; not
  // during open()'s replay. `state()` already shows the command's result.
  // `index` is 0 in lease mode (applied before it is written).
  std::function<void(log::LogIndex index, const core::Command& command, const core::ApplyResult& result)>
      applied;
  // After each own append completed (synced, or failed): the commands in the
  // batch and how long the append took (log write + sync, or the etcd txn).
  std::function<void(std::size_t commands, std::chrono::steady_clock::duration latency, bool ok)> committed;
};

// Returned by keepalive()/remaining_ms() for a session that never expires
// (a compat key without PX).
inline constexpr std::uint64_t kNeverExpires = UINT64_MAX;

class Node {
 public:
  using ProposeDone = std::function<void(const core::ApplyResult&)>;
  using EffectListener = std::function<void(const core::Effect&)>;

  // Recovers the state from `log` (latest snapshot, then every later entry),
  // then arms the timers of StateMachine::pending_timers() (in bulk; RESTART
  // BOUND). Runs synchronously on the calling thread, which becomes the loop
  // thread. `clock` must outlive the Node; `post` see node/clock.h.
  // With a revision guard, plans the start from the record first: proposes
  // the Reopen it asks for (the first command of the first batch) and
  // stores the new record before returning.
  // Errors: the log's load/read errors (kCorruption naming the entry/file,
  // kIoError); kCorruption if an entry does not decode or a snapshot does not
  // restore; kCorruption with the operator's message when the revision
  // record shows that the log lost data (plan_reopen); the record's store
  // error (kIoError).
  static Result<std::unique_ptr<Node>> open(NodeOptions options, std::unique_ptr<log::Log> log,
                                            Clock& clock, Executor post);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Stamps `command.now` with the log clock and queues it for the next batch.
  // `done` is called exactly once, on the loop thread, never inside this call:
  // with the state machine's ApplyResult after the command is durable and
  // applied, or with Reply{kError} (see ERRORS). `done` may be empty.
  void propose(core::Command command, ProposeDone done);

  // Receives every effect of every applied command, in order (after the
  // command's ProposeDone). Replaces any previous listener. Not called during
  // open()'s replay. The node also consumes SessionStarted/SessionTtlChanged/
  // SessionEnded/WaitDeadline/Granted/WaitEnded/WakeAt for its timers.
  void set_effect_listener(EffectListener listener);
  // Replaces the observer (see NodeObserver).
  void set_observer(NodeObserver observer);

  // Keepalive, in memory: the session's deadline becomes now + TTL. Value:
  // the remaining ms (= the TTL), or kNeverExpires. kSessionExpired if the
  // session is not live, its deadline already passed, or its expiry is being
  // proposed. Not logged.
  Result<std::uint64_t> keepalive(core::SessionId session);

  // Remaining ms until the session's deadline (0 if due), or kNeverExpires.
  // kSessionExpired as for keepalive(). No side effect.
  Result<std::uint64_t> remaining_ms(core::SessionId session) const;

  // The earliest timer deadline, or nullopt when no timer is armed.
  std::optional<TimePoint> next_timer_deadline() const;
  // Proposes ExpireSession / TimeoutWait / Tick for every timer that is due
  // (each at most once while its proposal is in flight).
  void run_due_timers();

  // The applied state, for queries on the loop thread. It holds exactly the
  // durable commands (a pending proposal is not visible yet), except with
  // NodeOptions::acknowledge_before_durable (the `lease` mode), where it
  // also holds commands applied and answered before their write.
  const core::StateMachine& state() const;
  // A fenced key's value for FENCE.GET: state().fence_get(key), except in
  // the `lease` mode while a FENCE.PUT of the key is applied but not yet
  // durable: then the value before it (nullopt: none), so that no reader
  // sees a value that a crash could take back. After a failed write the
  // durable value stays shown (the node takes no more writes).
  std::optional<core::FencedValue> fence_get(std::string_view key) const;

  // The log clock now (ms), e.g. for "remaining lock-delay" displays.
  core::LogMillis log_now() const;

  // Calls `done` (on the loop thread, later) once every write acknowledged
  // before this call is visible in state(): a linearizable-read barrier.
  // Embedded: immediately OK. Errors: kUnavailable/kRedirect (etcd, later).
  void read_barrier(std::function<void(Status)> done);

  // Calls `done` once, on the loop thread, never inside this call, when the
  // Reopen that open() proposed (after an unclean stop or a recovery) is
  // applied: from then on state() no longer shows what the stopped run left
  // (sessions it expires, its revision floor). When open() proposed none,
  // soon with OK. Errors: the Reopen's commit error (the log failed: the node
  // takes no writes).
  void when_opened(std::function<void(Status)> done);
  // True once the start's Reopen is applied (or open() proposed none).
  bool opened() const;

  NodeStats stats() const;
  // What open() decided about the revision record that the operator should
  // read (an unclean stop, a damaged copy, a recovery), one line each.
  const std::vector<std::string>& start_notices() const;
  Role role() const;
  // The last log entry applied (stats().applied_index without the rest).
  log::LogIndex applied_index() const;
  // "host:port" of the primary's client address; empty when this node is it.
  std::string primary_address() const;

  // Stops taking proposals (later ones get kUnavailable "shutting down"),
  // commits what was already accepted (calling their done), waits for an
  // in-flight snapshot, stops proposing timers, then calls `done` on the loop
  // thread. Idempotent: a second call's done runs when the first one's does.
  void shutdown(std::function<void()> done);

  // ---- Cluster mode only (NodeOptions::cluster_mode); see docs/cluster.md ----
  // On a standby: propose() answers kRedirect (message: the primary's
  // address) or kUnavailable (no primary known: the reason given below);
  // keepalive() likewise; remaining_ms() reports the full TTL of a live
  // session; no timer fires.

  // Applies log entry `index`, appended by another node (standby only).
  // index <= applied index: ignored. While an own append is still in
  // flight the entry is kept and applied after it. Effects go to the effect
  // listener (no ProposeDone). Errors: kConflict (this node is primary),
  // kInternal (gap: index > applied + 1), kCorruption (does not decode).
  Status follow(log::LogIndex index, std::string_view batch);
  // Catch-up recovery of a standby whose log watch fell behind an etcd
  // compaction or saw a gap (cluster/cluster_member.h): replaces the whole
  // state with snapshot `snapshot_bytes` taken at log `index` (restored as
  // open() restores a snapshot; index 0 with empty bytes = the empty initial
  // state), sets the applied index to `index` (also when that is BELOW the
  // current one: the caller then follows the entries after it again), and
  // drops entries deferred by follow(). The role stays standby, no timer is
  // armed, no effect is emitted (listeners see the jump only through
  // state()), and nothing is written to the log. Counted in
  // stats().catch_up_recoveries.
  // Errors (the state is unchanged): kConflict (this node is primary: a
  // primary must step down first), kUnavailable (an own append is still in
  // flight after a step down: retry after it completed), kCorruption (the
  // snapshot does not restore).
  Status reset_to_snapshot(log::LogIndex index, std::string_view snapshot_bytes);
  // Standby -> primary. The caller has applied the whole log first (via
  // follow). Every live session's timer restarts with its FULL TTL from
  // now (the failover bound, docs/cluster.md); the log clock continues from
  // the highest stamp in the log.
  void promote();
  // Primary -> standby (e.g. the election lease was lost). Queued proposals
  // get kUnavailable "stepped down: <why>"; an append in flight completes
  // normally (applied if it committed).
  void step_down(const Status& why);
  // Where a standby redirects ("" = no primary known: writes get
  // kUnavailable `unavailable_reason`).
  void set_primary_address(std::string address, std::string unavailable_reason);
  // Runs on the loop thread after the node stepped down by itself because
  // an append failed (kConflict / kUnavailable).
  void set_step_down_listener(std::function<void(const Status&)> listener);
  // Replaces read_barrier()'s behaviour (cluster: confirm the election key,
  // then when_applied(); see cluster/read_barrier.h).
  void set_read_barrier(std::function<void(std::function<void(Status)>)> barrier);
  // Calls `done` (on the loop thread, later) with OK once the applied log
  // index is >= `index` (also when it already is), or with the standby
  // refusal (kRedirect / kUnavailable "stepped down: ...") if the node
  // leaves the primary role first. Pending calls are dropped without a call
  // when the node is destroyed.
  void when_applied(log::LogIndex index, std::function<void(Status)> done);

 private:
  class Impl;
  explicit Node(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace leasehold::node
