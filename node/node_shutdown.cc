// node/node_shutdown.cc: stopping the node: commit (or, in lease mode,
// write) what is queued, wait for the append, snapshot and applies in
// flight, mark the revision record clean, then answer the waiters
// (docs/log-and-node.md, Shutdown).
#include "node/node_impl.h"

namespace leasehold::node {

void Node::Impl::shutdown(std::function<void()> done) {
  shutting_down_ = true;
  if (options_.acknowledge_before_durable) {
    // Lease mode: apply (and answer) what is queued, then write everything
    // now. Its writes go through lease_write() only: on_lease_appended
    // accounts for the chunks it wrote (start_append's batch would reach it
    // with none).
    lease_apply_queued();
    lease_write();
  } else {
    start_append();  // commit what is queued now (lingering or deferred)
  }
  if (done) shutdown_waiters_.push_back(std::move(done));
  maybe_finish_shutdown();
}

void Node::Impl::maybe_finish_shutdown() {
  if (!shutting_down_) return;
  if (append_in_flight_ || !queued_.empty() || snapshot_in_flight_ || !unwritten_.empty() || !committed_.empty()) {
    return;
  }
  if (!shutdown_complete_ && guard_ && failure_.is_ok() && is_primary()) {
    // Every acknowledged command is synced: the next start may continue
    // exactly here. Without this mark it starts above the reserved block.
    if (Status st = guard_->mark_clean(state_.revision()); !st) failure_ = st;
  }
  shutdown_complete_ = true;
  std::vector<std::function<void()>> waiters = std::move(shutdown_waiters_);
  shutdown_waiters_.clear();
  for (auto& waiter : waiters) {
    post_guarded([waiter = std::move(waiter)](Impl&) { waiter(); });
  }
}

}  // namespace leasehold::node
