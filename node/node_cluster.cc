// node/node_cluster.cc: cluster mode: standby role, following a log another
// node appends, promotion and stepping down (NodeOptions::cluster_mode).
#include "core/command_codec.h"
#include "node/node_impl.h"

namespace leasehold::node {

Status Node::Impl::follow(log::LogIndex index, std::string_view batch) {
  if (is_primary()) {
    return Status(ErrorCode::kConflict, "the primary does not follow (entry " + std::to_string(index) + ")");
  }
  if (index <= applied_index_) return Status::ok();
  if (append_.busy()) {
    // Our own last append may still land at this index; decide after it.
    cluster_.defer_follow(index, batch);
    return Status::ok();
  }
  if (index != applied_index_ + 1) {
    return Status(ErrorCode::kInternal, "log gap: applied " + std::to_string(applied_index_) +
                                            ", next entry seen is " + std::to_string(index));
  }
  auto commands = core::decode_batch(batch);
  if (!commands) {
    return Status(ErrorCode::kCorruption, "log entry " + std::to_string(index) + " (" + log_->describe() +
                                              ") does not decode: " + commands.status().message());
  }
  Batch entry;  // no ProposeDone: another node proposed these
  entry.commands = std::move(commands).value();
  entry.bytes = batch.size();
  apply_batch(index, std::move(entry));  // a standby tracks no timers
  maybe_snapshot();
  return Status::ok();
}

Status Node::Impl::reset_to_snapshot(log::LogIndex index, std::string_view snapshot_bytes) {
  if (is_primary()) {
    return Status(ErrorCode::kConflict, "the primary does not reset to a snapshot (step down first)");
  }
  if (append_.busy()) {
    return Status(ErrorCode::kUnavailable, "an own append is still in flight; reset after it completed");
  }
  core::StateMachine fresh(options_.limits);
  if (index != 0 || !snapshot_bytes.empty()) {
    auto restored = restore_snapshot(index, snapshot_bytes, options_.limits, log_->describe());
    if (!restored) return restored.status();
    fresh = std::move(restored).value();
  }
  state_ = std::move(fresh);
  applied_index_ = index;
  cluster_.clear_deferred_follows();
  snapshot_due_.restart();
  timers_ = Timers{};
  log_clock_.rebase(state_.last_now());
  ++counters_.catch_up_recoveries;
  return Status::ok();
}

void Node::Impl::when_applied(log::LogIndex index, std::function<void(Status)> done) {
  if (!done) return;
  if (!is_primary()) {
    const Status refusal = cluster_.refusal();
    post_guarded([done = std::move(done), refusal](Impl&) { done(refusal); });
    return;
  }
  if (index <= applied_index_) {
    post_guarded([done = std::move(done)](Impl&) { done(Status::ok()); });
    return;
  }
  apply_waiters_.add(index, std::move(done));
}

void Node::Impl::release_apply_waiters() {
  if (apply_waiters_.empty()) return;
  for (auto& done : apply_waiters_.take_through(applied_index_)) {
    post_guarded([done = std::move(done)](Impl&) { done(Status::ok()); });
  }
}

void Node::Impl::drain_deferred_follows() {
  while (cluster_.has_deferred_follows() && !append_.busy() && !is_primary()) {
    auto [index, bytes] = cluster_.take_deferred_follow();
    (void)follow(index, bytes);
  }
  if (is_primary()) cluster_.clear_deferred_follows();
}

void Node::Impl::promote() {
  if (is_primary()) return;
  cluster_.set_role(Role::kPrimary);
  ++counters_.promotions;
  cluster_.clear_primary_address();
  cluster_.clear_deferred_follows();
  timers_ = Timers{};
  log_clock_.rebase(state_.last_now());
  arm_recovered_timers();  // every live session: full TTL from now
}

void Node::Impl::become_standby(const Status& why) {
  if (!is_primary()) return;
  cluster_.set_role(Role::kStandby);
  ++counters_.step_downs;
  timers_ = Timers{};
  queue_.end_linger();
  const std::string message = "stepped down: " + why.message();
  for (CommitQueue::Queued& q : queue_.take_all()) {
    fail_later(std::move(q.done), ErrorCode::kUnavailable, message);
  }
  // Reads waiting for an own append: this node may no longer answer them.
  for (auto& done : apply_waiters_.take_all()) {
    post_guarded([done = std::move(done), message](Impl&) { done(Status(ErrorCode::kUnavailable, message)); });
  }
}

Status Node::follow(log::LogIndex index, std::string_view batch) { return impl_->follow(index, batch); }
Status Node::reset_to_snapshot(log::LogIndex index, std::string_view snapshot_bytes) {
  return impl_->reset_to_snapshot(index, snapshot_bytes);
}
void Node::promote() { impl_->promote(); }
void Node::step_down(const Status& why) { impl_->become_standby(why); }
void Node::set_primary_address(std::string address, std::string unavailable_reason) {
  impl_->cluster_.set_primary_address(std::move(address), std::move(unavailable_reason));
}
void Node::set_step_down_listener(std::function<void(const Status&)> listener) {
  impl_->cluster_.set_step_down_listener(std::move(listener));
}
void Node::when_applied(log::LogIndex index, std::function<void(Status)> done) {
  impl_->when_applied(index, std::move(done));
}
void Node::set_read_barrier(std::function<void(std::function<void(Status)>)> barrier) {
  impl_->cluster_.set_read_barrier(std::move(barrier));
}

}  // namespace leasehold::node
