// node/node_timers.cc: effects -> timers, and the proposals timers make.
#include <type_traits>

#include "node/node_impl.h"

namespace leasehold::node {
namespace {

bool is_retryable(const core::Reply& reply) {
  return reply.is_error() && (reply.error.code() == ErrorCode::kUnavailable ||
                              reply.error.code() == ErrorCode::kLimitExceeded);
}

core::Command timer_command(core::CommandBody body) {
  core::Command command;
  command.body = std::move(body);
  return command;
}

}  // namespace

void Node::Impl::arm_recovered_timers() {
  // Every live session gets its full TTL from now (the RESTART BOUND in
  // node.h), armed in bulk; waits and lock-delays keep their log-clock
  // deadlines.
  if (!is_primary()) return;  // standbys run no timers (cluster mode)
  timers_.arm_sessions(state_.session_ttls(), clock_.now());
  for (const core::Effect& effect : state_.pending_lock_timers()) track_effect(effect);
}

void Node::Impl::track_effect(const core::Effect& effect) {
  if (!is_primary()) return;  // standbys run no timers (cluster mode)
  std::visit(
      [this](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, core::SessionStarted> ||
                      std::is_same_v<E, core::SessionTtlChanged>) {
          timers_.start_session(e.session, e.ttl_ms, clock_.now());
        } else if constexpr (std::is_same_v<E, core::SessionEnded>) {
          timers_.end_session(e.session);
        } else if constexpr (std::is_same_v<E, core::WaitDeadline>) {
          timers_.add_wait(e.lock, e.session, log_clock_.steady_of(e.at));
        } else if constexpr (std::is_same_v<E, core::Granted> || std::is_same_v<E, core::WaitEnded>) {
          timers_.remove_wait(e.lock, e.session);
        } else if constexpr (std::is_same_v<E, core::WakeAt>) {
          timers_.add_wake(log_clock_.steady_of(e.at));
        } else if constexpr (std::is_same_v<E, core::LeaseDeadline>) {
          timers_.add_lease(e.lock, e.session, e.token, log_clock_.steady_of(e.at));
        } else if constexpr (std::is_same_v<E, core::LockLost>) {
          timers_.remove_lease(e.lock, e.session);  // a grant that ended has no lease left to end
        }
      },
      effect);
}

std::optional<TimePoint> Node::Impl::next_timer_deadline() const {
  if (shutdown_.requested() || !failure_.is_ok() || !is_primary()) return std::nullopt;
  std::optional<TimePoint> next = timers_.next_deadline();
  for (const std::optional<TimePoint>& bound : {queue_.linger_until(), queue_.defer_until(), lease_.write_at()}) {
    if (bound && (!next || *bound < *next)) next = bound;
  }
  return next;
}

void Node::Impl::run_due_timers() {
  if (shutdown_.requested() || !failure_.is_ok() || !is_primary()) return;
  end_due_linger();
  end_due_defer();
  end_due_lease_write();
  const TimePoint now = clock_.now();
  Timers::Due due = timers_.take_due(now);
  for (core::SessionId id : due.sessions) {
    propose(timer_command(core::ExpireSession{id}), [this, id](const core::ApplyResult& r) {
      if (is_retryable(r.reply)) {
        timers_.retry_session(id, clock_.now() + options_.timer_retry);
      } else {
        timers_.end_session(id);  // expired now, or already gone
      }
    });
  }
  for (auto& [lock, session] : due.waits) {
    propose(timer_command(core::TimeoutWait{lock, session}),
            [this, lock = lock, session = session](const core::ApplyResult& r) {
              if (is_retryable(r.reply)) timers_.add_wait(lock, session, clock_.now() + options_.timer_retry);
            });
  }
  for (Timers::DueLease& lease : due.leases) {
    core::EndLease end{lease.lock, lease.session, lease.token};
    propose(timer_command(std::move(end)), [this, lease = std::move(lease)](const core::ApplyResult& r) {
      if (is_retryable(r.reply)) {
        timers_.add_lease(lease.lock, lease.session, lease.token, clock_.now() + options_.timer_retry);
      }
    });
  }
  if (due.tick) {
    propose(timer_command(core::Tick{}), [this](const core::ApplyResult& r) {
      if (is_retryable(r.reply)) timers_.add_wake(clock_.now() + options_.timer_retry);
    });
  }
}

}  // namespace leasehold::node
