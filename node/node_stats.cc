// node/node_stats.cc: NodeStats, the node's counters and state for INFO's
// `log` section (docs/log-and-node.md, Stats).
#include <algorithm>

#include "node/node_impl.h"

namespace leasehold::node {

NodeStats Node::Impl::stats() const {
  NodeStats s;
  s.role = role_;
  s.applied_revision = state_.revision();
  s.applied_index = applied_index_;
  s.log = log_->position();
  s.batches_committed = batches_committed_;
  s.commands_committed = commands_committed_;
  s.average_batch_commands =
      batches_committed_ == 0 ? 0.0
                              : static_cast<double>(commands_committed_) / static_cast<double>(batches_committed_);
  s.pending_proposals = queued_.size() + in_flight_.commands.size() + unwritten_commands_ + unapplied_commands_;
  s.apply_steps_deferred = apply_steps_deferred_;
  s.snapshots_saved = snapshots_saved_;
  s.snapshot_steps = snapshot_steps_;
  s.snapshot_error = last_snapshot_error_;
  s.replayed_entries = replayed_entries_;
  s.timed_sessions = timers_.session_count();
  s.catch_up_recoveries = catch_up_recoveries_;
  if (guard_) {
    s.reserved_revision = guard_->record().reserved_through;
    s.revision_record_writes = guard_->record_writes();
  }
  // The applied quarantine, or this start's Reopen still on its way to
  // being applied.
  const core::LogMillis quarantine_end = std::max(state_.paused_until(), reopen_quarantine_until_);
  const core::LogMillis now = log_now();
  s.quarantine_until = quarantine_end > now ? quarantine_end : 0;
  s.quarantine_remaining_ms = quarantine_end > now ? quarantine_end - now : 0;
  s.promotions = promotions_;
  s.step_downs = step_downs_;
  s.failure = failure_;
  return s;
}

}  // namespace leasehold::node
