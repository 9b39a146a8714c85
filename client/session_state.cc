#include "client/session_state.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

namespace leasehold::client::detail {

Status HeldLock::status() const {
  std::lock_guard lock(mu_);
  return why_;
}

bool HeldLock::mark_lost(Status why) {
  {
    std::lock_guard lock(mu_);
    if (lost_.load()) return false;
    why_ = std::move(why);
    lost_.store(true, std::memory_order_release);
  }
  stop_.request_stop();
  return true;
}

Millis drift_margin(const SessionOptions& options) {
  const double factor = std::clamp(options.drift_factor, 0.0, 1.0);
  return std::chrono::duration_cast<Millis>(options.ttl * factor) + options.drift_fixed;
}

SessionState::SessionState(std::shared_ptr<Client> client_in, std::uint64_t id_in,
                           const SessionOptions& options, Clock::time_point first_deadline)
    : client(std::move(client_in)),
      id(id_in),
      ttl(options.ttl),
      interval(options.keepalive_interval.count() > 0 ? options.keepalive_interval
                                                      : std::max(Millis(1), options.ttl / 3)),
      drift(drift_margin(options)),
      drift_factor(std::clamp(options.drift_factor, 0.0, 1.0)),
      drift_fixed(options.drift_fixed),
      bind(options.close_grace.has_value()),
      close_grace(options.close_grace.value_or(Millis(0))),
      wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      on_lost_(options.on_lost),
      on_lock_lost_(options.on_lock_lost),
      deadline_ticks_(first_deadline.time_since_epoch().count()) {}

SessionState::~SessionState() {
  if (wake_fd >= 0) ::close(wake_fd);
}

Clock::time_point SessionState::deadline() const {
  return Clock::time_point(Clock::duration(deadline_ticks_.load(std::memory_order_acquire)));
}

void SessionState::set_deadline(Clock::time_point when) {
  deadline_ticks_.store(when.time_since_epoch().count(), std::memory_order_release);
}

void SessionState::bound_connection_lost(Clock::time_point bound_floor) {
  if (!bind) return;
  const Millis margin = std::chrono::duration_cast<Millis>(close_grace * drift_factor) + drift_fixed;
  const Clock::time_point limit = bound_floor + safe_part(close_grace, margin);
  // Only this session's keepalive thread moves the deadline.
  if (limit < deadline()) set_deadline(limit);
}

bool SessionState::ended() const {
  return ended_.load(std::memory_order_acquire) || Clock::now() >= deadline();
}

Status SessionState::status() const {
  {
    std::lock_guard lock(mu_);
    if (ended_.load()) return end_status_;
  }
  if (Clock::now() >= deadline()) {
    return Status(ErrorCode::kTimedOut, "the session's safe deadline has passed");
  }
  return Status::ok();
}

void SessionState::end(Status why, bool is_loss) {
  if (closing.load(std::memory_order_acquire)) is_loss = false;
  std::vector<std::shared_ptr<HeldLock>> locks;
  {
    std::lock_guard lock(mu_);
    if (ended_.load()) return;
    end_status_ = why;
    ended_.store(true, std::memory_order_release);
    for (auto& [key, held] : held_) locks.push_back(held);
  }
  watching_cv_.notify_all();
  stop_.request_stop();
  if (wake_fd >= 0) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }
  for (const auto& held : locks) {
    if (held->mark_lost(why) && is_loss && on_lock_lost_) {
      on_lock_lost_(held->name(), held->token(), why);
    }
  }
  if (is_loss && on_lost_) on_lost_(why);
}

void SessionState::mark_watching() {
  {
    std::lock_guard lock(mu_);
    watching_ = true;
  }
  watching_cv_.notify_all();
}

bool SessionState::wait_watching(Clock::time_point until) const {
  std::unique_lock lock(mu_);
  watching_cv_.wait_until(lock, until, [this] { return watching_ || ended_.load(); });
  return watching_;
}

void SessionState::lock_lost(const std::string& name, std::uint64_t token, Status why) {
  std::shared_ptr<HeldLock> held;
  {
    std::lock_guard lock(mu_);
    auto it = held_.find({name, token});
    if (it == held_.end()) return;
    held = it->second;
  }
  if (held->mark_lost(why) && on_lock_lost_) on_lock_lost_(name, token, why);
}

std::shared_ptr<HeldLock> SessionState::register_lock(const std::string& name,
                                                      std::uint64_t token) {
  auto held = std::make_shared<HeldLock>(name, token);
  bool already_ended = false;
  {
    std::lock_guard lock(mu_);
    held_[{name, token}] = held;
    already_ended = ended_.load();
  }
  if (already_ended) held->mark_lost(status());
  return held;
}

void SessionState::unregister_lock(const HeldLock& lock_to_drop) {
  std::lock_guard lock(mu_);
  held_.erase({lock_to_drop.name(), lock_to_drop.token()});
}

std::vector<std::shared_ptr<HeldLock>> SessionState::held_locks() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<HeldLock>> out;
  for (const auto& [key, held] : held_) out.push_back(held);
  return out;
}

}  // namespace leasehold::client::detail
