// node/group_commit.cc: proposals -> batches -> durable appends -> apply.
// Snapshots: snapshots.cc; shutdown: node_shutdown.cc; stats: node_stats.cc.
#include <algorithm>

#include "common/assert.h"
#include "common/saturating_duration.h"
#include "core/command_codec.h"
#include "node/node_impl.h"

namespace leasehold::node {
namespace {

// Failures after which the node's state and the log may disagree (or the
// node may no longer write): the node stops taking writes.
bool is_fatal(ErrorCode code) {
  return code == ErrorCode::kIoError || code == ErrorCode::kCorruption ||
         code == ErrorCode::kInternal || code == ErrorCode::kConflict;
}

}  // namespace

void Node::Impl::propose(core::Command command, ProposeDone done) {
  if (!failure_.is_ok()) {
    return fail_later(std::move(done), ErrorCode::kUnavailable, "node stopped: " + failure_.to_string());
  }
  if (shutdown_.requested()) return fail_later(std::move(done), ErrorCode::kUnavailable, "shutting down");
  if (!is_primary()) {
    const Status refusal = cluster_.refusal();
    return fail_later(std::move(done), refusal.code(), refusal.message());
  }
  const std::size_t pending = queue_.size() + append_.commands() + lease_.commands() + applying_.unapplied();
  if (pending >= options_.max_pending_proposals) {
    return fail_later(std::move(done), ErrorCode::kLimitExceeded,
                      "too many pending proposals (" + std::to_string(pending) + ")");
  }
  command.now = log_clock_.stamp();
  const std::size_t bytes = queue_.encoded_size(command);
  if (bytes > options_.max_batch_bytes) {
    return fail_later(std::move(done), ErrorCode::kLimitExceeded,
                      "command of " + std::to_string(bytes) + " bytes exceeds the batch limit " +
                          std::to_string(options_.max_batch_bytes));
  }
  const bool deferred = is_deferrable(command);
  if (deferred) defer(command);
  queue_.push(std::move(command), std::move(done), bytes, deferred);
  if (queue_.linger_until()) {
    if (queue_.size() >= queue_.linger_target()) start_append();  // everyone expected is back
    return;
  }
  if (!deferred) schedule_append();
}

// A blocking acquire that would queue, in fsync mode (lease mode answers
// nothing later than it applies: no append to save).
bool Node::Impl::is_deferrable(const core::Command& command) const {
  if (options_.enqueue_defer.count() <= 0 || options_.acknowledge_before_durable) return false;
  const auto* acquire = std::get_if<core::Acquire>(&command.body);
  return acquire != nullptr && state_.acquire_would_queue(*acquire);
}

void Node::Impl::defer(const core::Command& command) {
  auto bound = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.enqueue_defer);
  const auto& acquire = std::get<core::Acquire>(command.body);
  // wait_ms is not yet checked against max_wait_ms (core does that when it
  // applies): the conversion saturates rather than overflow.
  if (acquire.wait_ms != 0) bound = std::min(bound, saturating_ms(acquire.wait_ms));
  queue_.bound_defer(saturating_add(clock_.now(), bound));
}

void Node::Impl::end_due_defer() {
  if (queue_.defer_until() && clock_.now() >= *queue_.defer_until()) start_append();
}

// The first proposal after an idle period does not start the append at once:
// the start is posted behind the work the loop already has, so every request
// read in the same loop iteration (e.g. one client's RELEASE and another's
// ACQUIRE that arrived together) joins one batch and one fsync. While an
// append is in flight nothing is scheduled: on_appended starts the next one.
void Node::Impl::schedule_append() {
  const bool lease = options_.acknowledge_before_durable;
  // In lease mode proposals are applied (and answered) while an append is
  // in flight: only the writing waits for it (node/lease_commit.cc).
  if ((append_.busy() && !lease) || append_.scheduled() || queue_.linger_until() || !failure_.is_ok()) return;
  append_.set_scheduled(true);
  post_guarded([lease](Impl& self) {
    self.append_.set_scheduled(false);
    if (self.is_primary()) {
      if (lease) {
        self.lease_apply_queued();
      } else {
        self.start_append();
      }
    }
    self.maybe_finish_shutdown();
  });
}

// Commit linger (NodeOptions::commit_linger): decided when an append of
// `answered` commands completed, before it is applied. With proposals
// queued, the next append waits (begin_linger, after the apply) until
// `target` = queued + answered are queued, or the bound. It only pays when
// the append is slow next to the clients' return trip and several clients
// were answered; otherwise (a fast local fsync, or a hand-off chain of one
// or two commands) the next append starts at once.
bool Node::Impl::should_linger(std::size_t answered) const {
  return options_.commit_linger.count() > 0 && !queue_.empty() && answered >= kLingerMinAnswered &&
         append_.last_latency() >= kLingerMinAppendRatio * options_.commit_linger;
}

void Node::Impl::begin_linger(std::size_t target) {
  if (append_.busy()) return;
  target = std::min(target, options_.max_batch_commands);
  if (queue_.size() >= target) return start_append();
  queue_.begin_linger(target, clock_.now() + options_.commit_linger);
}

void Node::Impl::end_due_linger() {
  if (queue_.linger_until() && clock_.now() >= *queue_.linger_until()) start_append();
}

void Node::Impl::start_append() {
  queue_.end_linger();
  if (append_.busy() || queue_.empty() || !failure_.is_ok()) return;
  if (queue_.only_deferred() && !shutdown_.requested()) {
    // Only deferred enqueues: they wait for company until their bound.
    if (!queue_.defer_until()) queue_.bound_defer(clock_.now() + options_.enqueue_defer);
    if (clock_.now() < *queue_.defer_until()) return;
  }
  queue_.clear_defer();
  Batch batch = queue_.take_batch(options_.max_batch_commands, options_.max_batch_bytes);
  if (guard_) {
    // The record must bound every revision this batch can produce before the
    // batch can be applied and answered (node/revision_guard.h).
    if (Status st = guard_->before_append(batch.commands, state_.revision()); !st) {
      stop_writes(Status(st.code(), "revision record: " + st.message()), std::move(batch));
      return;
    }
  }
  std::string bytes = core::encode_batch(batch.commands);
  append_.begin(std::move(batch), clock_.now());
  // The log calls back on its own thread; hop to the loop thread.
  log_->append(std::move(bytes), [weak = weak_from_this(), post = post_](Result<log::LogIndex> r) {
    post([weak, r = std::move(r)]() mutable {
      if (auto self = weak.lock()) self->on_appended(std::move(r));
    });
  });
}

void Node::Impl::on_appended(Result<log::LogIndex> result) {
  if (options_.acknowledge_before_durable) return on_lease_appended(std::move(result));
  Batch batch = append_.finish(clock_.now());
  if (observer_.committed) observer_.committed(batch.commands.size(), append_.last_latency(), result.is_ok());
  if (!result) {
    const Status error = result.status();
    if (options_.cluster_mode &&
        (error.code() == ErrorCode::kConflict || error.code() == ErrorCode::kUnavailable)) {
      // Cluster mode: deposed, or etcd unreachable with the outcome unknown.
      // Nothing of this batch was applied here; if it did commit, the
      // follower path applies it from the log like any other entry.
      // Clients get -UNAVAILABLE either way: -CONFLICT means a lock-state
      // conflict (docs/protocol.md), not "this node was deposed".
      const bool deposed = error.code() == ErrorCode::kConflict;
      const bool says_so = error.message().rfind("deposed", 0) == 0;
      fail_batch(std::move(batch), deposed ? Status(ErrorCode::kUnavailable,
                                                    says_so ? error.message() : "deposed: " + error.message())
                                           : error);
      const bool was_primary = is_primary();
      become_standby(error);
      drain_deferred_follows();
      if (was_primary && cluster_.step_down_listener()) cluster_.step_down_listener()(error);
      maybe_finish_shutdown();
      return;
    }
    if (is_fatal(error.code())) {
      stop_writes(error, std::move(batch));
    } else {
      fail_batch(std::move(batch), error);
      start_append();
    }
    maybe_finish_shutdown();
    return;
  }
  const bool linger = should_linger(batch.commands.size());
  const std::size_t target = queue_.size() + batch.commands.size();
  // Without a linger, let the disk work on the next batch while this one is applied.
  if (!linger) start_append();
  apply_batch(*result, std::move(batch), /*in_steps=*/!options_.cluster_mode);
  if (linger) begin_linger(target);
  after_apply();
}

void Node::Impl::after_apply() {
  drain_deferred_follows();
  maybe_snapshot();
  maybe_finish_shutdown();
}

void Node::Impl::stop_writes(const Status& error, Batch batch) {
  failure_ = error;
  queue_.end_linger();
  const std::string why = "node stopped: " + error.to_string();
  fail_batch(std::move(batch), Status(error.code(), error.message() + " (outcome unknown)"));
  for (CommitQueue::Queued& q : queue_.take_all()) {
    if (q.done) q.done(core::ApplyResult{core::Reply::fail(ErrorCode::kUnavailable, why), {}});
  }
}

void Node::Impl::fail_batch(Batch batch, const Status& error) {
  for (ProposeDone& done : batch.dones) {
    if (done) done(core::ApplyResult{core::Reply::fail(error.code(), error.message()), {}});
  }
}

void Node::Impl::apply_batch(log::LogIndex index, Batch batch, bool in_steps) {
  ++counters_.batches_committed;
  counters_.commands_committed += batch.commands.size();
  snapshot_due_.note(batch.commands.size(), batch.bytes);
  applying_.push(index, std::move(batch));
  apply_committed(in_steps ? options_.apply_step : std::chrono::nanoseconds::zero());
}

void Node::Impl::apply_committed(std::chrono::nanoseconds budget) {
  const auto started = std::chrono::steady_clock::now();
  std::size_t applied = 0;
  while (!applying_.empty()) {
    ApplyQueue::Entry& entry = applying_.front();
    // Entries apply in log order, never twice or backwards (follow() checks
    // gaps before; an own append's index comes from the log).
    LEASEHOLD_ASSERT(entry.index > applied_index_, "log entry {} applied after entry {}", entry.index,
                     applied_index_);
    Batch& batch = entry.batch;
    while (entry.next < batch.commands.size()) {
      if (budget.count() > 0 && applied != 0 && applied % kApplyStepCheck == 0 &&
          std::chrono::steady_clock::now() - started >= budget) {
        // The rest in a later turn of the loop, after what is waiting now.
        if (applying_.claim_step()) {
          ++counters_.apply_steps_deferred;
          post_guarded([](Impl& self) {
            self.applying_.step_ran();
            self.apply_committed(self.options_.apply_step);
            self.after_apply();
          });
        }
        return;
      }
      const std::size_t i = applying_.take_next();
      ++applied;
      apply_one(entry.index, batch.commands[i], i < batch.dones.size() ? &batch.dones[i] : nullptr);
    }
    applied_index_ = entry.index;
    applying_.pop_front();
    if (guard_) {
      LEASEHOLD_ASSERT(state_.revision() <= guard_->record().reserved_through,
                       "applied revision {} is above the reserved block {}", state_.revision(),
                       guard_->record().reserved_through);
    }
    release_apply_waiters();  // cluster read barriers (node_cluster.cc)
  }
}

core::ApplyResult Node::Impl::apply_one(log::LogIndex index, const core::Command& command, ProposeDone* done) {
  core::ApplyResult result = state_.apply(command);
  if (observer_.applied) observer_.applied(index, command, result);
  for (const core::Effect& effect : result.effects) track_effect(effect);
  if (done != nullptr && *done) (*done)(result);
  if (listener_) {
    for (const core::Effect& effect : result.effects) listener_(effect);
  }
  return result;
}

}  // namespace leasehold::node
