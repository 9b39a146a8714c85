// node/node_stats.cc: NodeStats, the node's counters and state for INFO's
// `log` section (docs/log-and-node.md, Stats).
#include <algorithm>

#include "node/node_impl.h"

namespace leasehold::node {

NodeStats Node::Impl::stats() const {
  NodeStats s;
  s.role = cluster_.role();
  s.applied_revision = state_.revision();
  s.applied_index = applied_index_;
  s.log = log_->position();
  s.batches_committed = counters_.batches_committed;
  s.commands_committed = counters_.commands_committed;
  s.average_batch_commands = counters_.batches_committed == 0
                                 ? 0.0
                                 : static_cast<double>(counters_.commands_committed) /
                                       static_cast<double>(counters_.batches_committed);
  s.pending_proposals = queue_.size() + append_.commands() + lease_.commands() + applying_.unapplied();
  s.apply_steps_deferred = counters_.apply_steps_deferred;
  s.snapshots_saved = counters_.snapshots_saved;
  s.snapshot_steps = counters_.snapshot_steps;
  s.snapshot_error = snapshot_.last_error();
  s.replayed_entries = counters_.replayed_entries;
  s.timed_sessions = timers_.session_count();
  s.catch_up_recoveries = counters_.catch_up_recoveries;
  if (guard_) {
    s.reserved_revision = guard_->record().reserved_through;
    s.revision_record_writes = guard_->record_writes();
  }
  // The applied quarantine, or this start's Reopen still on its way to
  // being applied.
  const core::LogMillis quarantine_end = std::max(state_.paused_until(), opening_.reopen_quarantine_until());
  const core::LogMillis now = log_clock_.now();
  s.quarantine_until = quarantine_end > now ? quarantine_end : 0;
  s.quarantine_remaining_ms = quarantine_end > now ? quarantine_end - now : 0;
  s.promotions = counters_.promotions;
  s.step_downs = counters_.step_downs;
  s.failure = failure_;
  return s;
}

}  // namespace leasehold::node
