// node/node.cc: Node's public methods and recovery (open).
#include "node/node.h"

#include <algorithm>

#include "core/command_codec.h"
#include "core/quarantine.h"
#include "node/node_impl.h"

namespace leasehold::node {

std::string_view role_name(Role role) {
  return role == Role::kPrimary ? "primary" : "standby";
}

Node::Impl::Impl(NodeOptions options, std::unique_ptr<log::Log> log, Clock& clock, Executor post,
                 core::StateMachine state, log::LogIndex applied_index)
    : options_(std::move(options)),
      log_(std::move(log)),
      clock_(clock),
      post_(std::move(post)),
      state_(std::move(state)),
      applied_index_(applied_index),
      log_clock_(clock, state_.last_now()) {}

void Node::Impl::post_guarded(std::function<void(Impl&)> task) {
  post_([weak = weak_from_this(), task = std::move(task)] {
    if (auto self = weak.lock()) task(*self);
  });
}

void Node::Impl::fail_later(ProposeDone done, ErrorCode code, std::string message) {
  if (!done) return;
  post_guarded([done = std::move(done), code, message = std::move(message)](Impl&) {
    done(core::ApplyResult{core::Reply::fail(code, message), {}});
  });
}

Result<core::StateMachine> restore_snapshot(log::LogIndex index, std::string_view bytes, const core::Limits& limits,
                                            const std::string& where) {
  auto restored = core::StateMachine::restore(bytes, limits);
  if (!restored) {
    return Status(ErrorCode::kCorruption, "snapshot at log index " + std::to_string(index) + " (" + where +
                                              ") does not restore: " + restored.status().message());
  }
  return std::move(restored).value();
}

namespace {

// Loads the latest snapshot and replays every later entry into a state machine.
Status recover(log::Log& log, const core::Limits& limits, core::StateMachine& state,
               log::LogIndex& applied, std::uint64_t& replayed) {
  auto snapshot = log.load_snapshot();
  if (!snapshot) return snapshot.status();
  if (snapshot->has_value()) {
    auto restored = restore_snapshot((*snapshot)->index, (*snapshot)->bytes, limits, log.describe());
    if (!restored) return restored.status();
    state = std::move(restored).value();
    applied = (*snapshot)->index;
  }
  Status st = log.read(applied + 1, [&](log::LogIndex index, std::string_view bytes) {
    auto commands = core::decode_batch(bytes);
    if (!commands) {
      return Status(ErrorCode::kCorruption, "log entry " + std::to_string(index) + " (" +
                                                log.describe() + ") does not decode: " +
                                                commands.status().message());
    }
    for (const core::Command& command : *commands) (void)state.apply(command);
    applied = index;
    ++replayed;
    return Status::ok();
  });
  if (!st) return st;
  if (applied != log.position().last) {
    return Status(ErrorCode::kCorruption, "log " + log.describe() + " ends at entry " +
                                              std::to_string(log.position().last) +
                                              " but replay stopped at " + std::to_string(applied));
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Node>> Node::open(NodeOptions options, std::unique_ptr<log::Log> log,
                                         Clock& clock, Executor post) {
  if (!log) return Status(ErrorCode::kInvalidArgument, "node needs a log");
  if (!post) return Status(ErrorCode::kInvalidArgument, "node needs an executor");
  if (options.max_batch_commands == 0 || options.max_batch_bytes == 0) {
    return Status(ErrorCode::kInvalidArgument, "batch limits must be > 0");
  }
  core::StateMachine state(options.limits);
  log::LogIndex applied = 0;
  std::uint64_t replayed = 0;
  if (Status st = recover(*log, options.limits, state, applied, replayed); !st) return st;
  std::optional<ReopenPlan> plan;
  if (options.acknowledge_before_durable && (options.cluster_mode || !options.revision_guard)) {
    return Status(ErrorCode::kInvalidArgument,
                  "lease durability needs the revision record and is embedded-mode only");
  }
  if (options.acknowledge_before_durable) options.commit_linger = std::chrono::microseconds(0);
  if (options.revision_guard && !options.cluster_mode) {
    const RevisionGuardOptions& g = *options.revision_guard;
    if (!g.store) return Status(ErrorCode::kInvalidArgument, "revision guard needs a store function");
    const bool log_empty = log->position().last == 0 && state.revision() == 0;
    auto planned = plan_reopen(g, state.revision(), log_empty, log->describe());
    if (!planned) return planned.status();
    // Stored before anything is appended: the record bounds the first batch.
    if (planned->store_now) {
      if (Status st = g.store(planned->record); !st) return st;
    }
    plan = std::move(planned).value();
  }
  auto impl = std::make_shared<Impl>(std::move(options), std::move(log), clock, std::move(post),
                                     std::move(state), applied);
  impl->counters_.replayed_entries = replayed;
  impl->lease_.set_durable(impl->state_.revision());
  if (plan) {
    const RevisionGuard::TtlRange ttls = core::accepted_ttls(impl->options_.limits);
    impl->guard_.emplace(impl->options_.revision_guard->store, plan->record, impl->state_.revision(),
                         impl->options_.revision_guard->block, impl->options_.revision_guard->lease, ttls,
                         owes_quarantine(*plan));
    impl->start_notices_ = std::move(plan->notices);
  }
  if (impl->options_.cluster_mode) {
    impl->cluster_.set_role(Role::kStandby);  // cluster/ promotes it once elected
  } else {
    impl->arm_recovered_timers();
  }
  if (plan && plan->reopen) {
    core::Command reopen;
    reopen.body = *plan->reopen;
    // The first command of the first batch. Impl owns the callback, so the
    // raw pointer outlives it.
    impl->propose(std::move(reopen), [self = impl.get()](const core::ApplyResult& r) {
      self->finish_opening(r.reply.is_error() ? Status(r.reply.error.code(), "the start's Reopen: " +
                                                                                 r.reply.error.message())
                                              : Status::ok());
    });
    // Known now, before the Reopen is applied (in fsync mode, after its
    // fsync): stats() reports it from the start, so that no INFO or /readyz
    // answered meanwhile says "not quarantined".
    if (plan->reopen->quarantine_ms > 0 && !impl->queue_.empty()) {
      impl->opening_.set_reopen_quarantine_until(core::quarantine_end(*plan->reopen, impl->queue_.back().now));
    }
  }
  if (!plan || !plan->reopen) (void)impl->opening_.settle(Status::ok());
  return std::unique_ptr<Node>(new Node(std::move(impl)));
}

void Node::Impl::finish_opening(Status outcome) {
  for (auto& done : opening_.settle(outcome)) done(outcome);
}

Node::Node(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Node::~Node() = default;

void Node::propose(core::Command command, ProposeDone done) {
  impl_->propose(std::move(command), std::move(done));
}
void Node::set_effect_listener(EffectListener listener) { impl_->listener_ = std::move(listener); }
void Node::set_observer(NodeObserver observer) { impl_->observer_ = std::move(observer); }
Result<std::uint64_t> Node::keepalive(core::SessionId session) {
  if (!impl_->is_primary()) return impl_->cluster_.refusal();
  return impl_->timers_.keepalive(session, impl_->clock_.now());
}
Result<std::uint64_t> Node::remaining_ms(core::SessionId session) const {
  if (!impl_->is_primary()) {
    auto info = impl_->state_.session(session);
    if (!info) return Status(ErrorCode::kSessionExpired, "no live session " + std::to_string(session));
    return info->ttl_ms == 0 ? kNeverExpires : info->ttl_ms;
  }
  return impl_->timers_.remaining_ms(session, impl_->clock_.now());
}
std::optional<TimePoint> Node::next_timer_deadline() const { return impl_->next_timer_deadline(); }
void Node::run_due_timers() { impl_->run_due_timers(); }
const core::StateMachine& Node::state() const { return impl_->state_; }
std::optional<core::FencedValue> Node::fence_get(std::string_view key) const {
  if (const auto* durable = impl_->lease_.undurable_fence(key)) return *durable;
  return impl_->state_.fence_get(key);
}
core::LogMillis Node::log_now() const { return impl_->log_clock_.now(); }
void Node::read_barrier(std::function<void(Status)> done) {
  if (!done) return;
  if (impl_->cluster_.read_barrier()) return impl_->cluster_.read_barrier()(std::move(done));
  impl_->post_guarded([done = std::move(done)](Impl&) { done(Status::ok()); });
}
void Node::when_opened(std::function<void(Status)> done) {
  if (!done) return;
  if (!impl_->opening_.outcome()) return impl_->opening_.wait(std::move(done));
  impl_->post_guarded([done = std::move(done)](Impl& self) { done(*self.opening_.outcome()); });
}
bool Node::opened() const { return impl_->opening_.opened(); }
NodeStats Node::stats() const { return impl_->stats(); }
const std::vector<std::string>& Node::start_notices() const { return impl_->start_notices_; }
Role Node::role() const { return impl_->cluster_.role(); }
log::LogIndex Node::applied_index() const { return impl_->applied_index_; }
std::string Node::primary_address() const { return impl_->cluster_.primary_address(); }
void Node::shutdown(std::function<void()> done) { impl_->shutdown(std::move(done)); }

}  // namespace leasehold::node
