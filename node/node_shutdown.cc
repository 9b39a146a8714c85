// node/node_shutdown.cc: stopping the node: commit (or, in lease mode,
// write) what is queued, wait for the append, snapshot and applies in
// flight, mark the revision record clean, then answer the waiters
// (docs/log-and-node.md, Shutdown).
#include "node/node_impl.h"

namespace leasehold::node {

void Node::Impl::shutdown(std::function<void()> done) {
  shutdown_.request();
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
  if (done) shutdown_.wait(std::move(done));
  maybe_finish_shutdown();
}

void Node::Impl::maybe_finish_shutdown() {
  if (!shutdown_.requested()) return;
  if (append_.busy() || !queue_.empty() || snapshot_.in_flight() || !lease_.unwritten_empty() || !applying_.empty()) {
    return;
  }
  if (!shutdown_.complete() && guard_ && failure_.is_ok() && is_primary()) {
    // Every acknowledged command is synced: the next start may continue
    // exactly here. Without this mark it starts above the reserved block.
    if (Status st = guard_->mark_clean(state_.revision()); !st) failure_ = st;
  }
  for (auto& waiter : shutdown_.complete_now()) {
    post_guarded([waiter = std::move(waiter)](Impl&) { waiter(); });
  }
}

}  // namespace leasehold::node
