// node/node_cluster.cc: cluster mode: standby role, following a log another
// node appends, promotion and stepping down (NodeOptions::cluster_mode).
#include "core/command_codec.h"
#include "node/node_impl.h"

namespace leasehold::node {

Status Node::Impl::standby_refusal() const {
  if (!primary_address_.empty()) return Status(ErrorCode::kRedirect, primary_address_);
  return Status(ErrorCode::kUnavailable, unavailable_reason_);
}

Status Node::Impl::follow(log::LogIndex index, std::string_view batch) {
  if (is_primary()) {
    return Status(ErrorCode::kConflict, "the primary does not follow (entry " + std::to_string(index) + ")");
  }
  if (index <= applied_index_) return Status::ok();
  if (append_in_flight_) {
    // Our own last append may still land at this index; decide after it.
    deferred_follows_.emplace_back(index, std::string(batch));
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
  if (append_in_flight_) {
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
  deferred_follows_.clear();
  commands_since_snapshot_ = 0;
  bytes_since_snapshot_ = 0;
  timers_ = Timers{};
  base_steady_ = clock_.now();
  base_log_ = std::max(state_.last_now(), last_stamp_);
  last_stamp_ = base_log_;
  ++catch_up_recoveries_;
  return Status::ok();
}

void Node::Impl::when_applied(log::LogIndex index, std::function<void(Status)> done) {
  if (!done) return;
  if (!is_primary()) {
    const Status refusal = standby_refusal();
    post_guarded([done = std::move(done), refusal](Impl&) { done(refusal); });
    return;
  }
  if (index <= applied_index_) {
    post_guarded([done = std::move(done)](Impl&) { done(Status::ok()); });
    return;
  }
  apply_waiters_.emplace(index, std::move(done));
}

void Node::Impl::release_apply_waiters() {
  if (apply_waiters_.empty()) return;
  const auto end = apply_waiters_.upper_bound(applied_index_);
  for (auto it = apply_waiters_.begin(); it != end; ++it) {
    post_guarded([done = std::move(it->second)](Impl&) { done(Status::ok()); });
  }
  apply_waiters_.erase(apply_waiters_.begin(), end);
}

void Node::Impl::drain_deferred_follows() {
  while (!deferred_follows_.empty() && !append_in_flight_ && !is_primary()) {
    auto [index, bytes] = std::move(deferred_follows_.front());
    deferred_follows_.pop_front();
    (void)follow(index, bytes);
  }
  if (is_primary()) deferred_follows_.clear();
}

void Node::Impl::promote() {
  if (is_primary()) return;
  role_ = Role::kPrimary;
  ++promotions_;
  primary_address_.clear();
  deferred_follows_.clear();
  timers_ = Timers{};
  base_steady_ = clock_.now();
  base_log_ = std::max(state_.last_now(), last_stamp_);
  last_stamp_ = base_log_;
  arm_recovered_timers();  // every live session: full TTL from now
}

void Node::Impl::become_standby(const Status& why) {
  if (!is_primary()) return;
  role_ = Role::kStandby;
  ++step_downs_;
  timers_ = Timers{};
  linger_until_.reset();
  const std::string message = "stepped down: " + why.message();
  while (!queued_.empty()) {
    Queued q = std::move(queued_.front());
    queued_.pop_front();
    fail_later(std::move(q.done), ErrorCode::kUnavailable, message);
  }
  clear_queue_counters();
  // Reads waiting for an own append: this node may no longer answer them.
  auto waiters = std::move(apply_waiters_);
  apply_waiters_.clear();
  for (auto& [index, done] : waiters) {
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
  impl_->primary_address_ = std::move(address);
  impl_->unavailable_reason_ = std::move(unavailable_reason);
}
void Node::set_step_down_listener(std::function<void(const Status&)> listener) {
  impl_->step_down_listener_ = std::move(listener);
}
void Node::when_applied(log::LogIndex index, std::function<void(Status)> done) {
  impl_->when_applied(index, std::move(done));
}
void Node::set_read_barrier(std::function<void(std::function<void(Status)>)> barrier) {
  impl_->read_barrier_ = std::move(barrier);
}

}  // namespace leasehold::node
