#include "leasehold/lock_guard.h"

#include <optional>

#include "client/client_core.h"
#include "client/session_state.h"

namespace leasehold::client {
namespace {

Status session_gone(const detail::SessionState& st) {
  Status why = st.status();
  return Status(ErrorCode::kSessionExpired,
                why.message().empty() ? "session " + std::to_string(st.id) + " ended"
                                      : why.message());
}

// The client-side end of a lease of `lease` started no earlier than `sent`.
Clock::time_point lease_end(const detail::SessionState& st, Clock::time_point sent, Millis lease) {
  const Millis drift = std::chrono::duration_cast<Millis>(lease * st.drift_factor) + st.drift_fixed;
  return sent + lease - drift;
}

struct Granted {
  std::uint64_t token = 0;
  int retries = 0;
  Clock::time_point sent;  // before the request that was granted was first sent
};

// try: `timeout` unset.
Result<Granted> acquire_token(detail::SessionState& st,
                                                    const std::string& name,
                                                    std::optional<Millis> timeout,
                                                    const LockOptions& options) {
  if (name.empty()) return Status(ErrorCode::kInvalidArgument, "empty lock name");
  if (options.mode == LockMode::kSemaphore && options.limit == 0) {
    return Status(ErrorCode::kInvalidArgument, "a semaphore needs a limit >= 1");
  }
  if (timeout && timeout->count() < 0) {
    return Status(ErrorCode::kInvalidArgument, "negative timeout");
  }
  const auto deadline = Clock::now() + timeout.value_or(Millis(0));
  while (true) {
    if (st.ended()) return session_gone(st);
    AcquireRequest req{name, st.id, options.mode, options.limit, std::nullopt,
                               options.delay, st.next_seq(), options.lease};
    const Clock::time_point sent = Clock::now();
    if (timeout) {
      auto left = std::chrono::ceil<Millis>(deadline - Clock::now());
      req.wait = std::max(left, Millis(1));  // WAIT 0 would mean "forever"
    }
    int retries = 0;
    auto r = detail::acquire_call(st.client->core(), req, st.wake_fd, &retries);
    if (!r) {
      if (detail::is_interrupted(r.status()) || st.ended()) return session_gone(st);
      if (r.status().code() == ErrorCode::kTimedOut) {
        return Status(ErrorCode::kTimedOut, "lock '" + name + "' not granted in time (" +
                                                r.status().message() + ")");
      }
      return r.status();
    }
    if (*r) return Granted{**r, retries, sent};
    if (!timeout) {
      return Status(ErrorCode::kWouldBlock, "lock '" + name + "' is held by another session");
    }
    // nil after a re-send: the first wait may have been cancelled by the
    // disconnect; ask again (new SEQ) while time remains.
    if (retries > 0 && Clock::now() < deadline) continue;
    return Status(ErrorCode::kTimedOut,
                  "lock '" + name + "' not granted within " + std::to_string(timeout->count()) +
                      "ms (or the wait was cancelled)");
  }
}

}  // namespace

Result<LockGuard> LockGuard::acquire(Session& session, std::string name, Millis timeout,
                                     LockOptions options) {
  auto granted = acquire_token(*session.state(), name, timeout, options);
  if (!granted) return granted.status();
  auto held = session.state()->register_lock(name, granted->token);
  if (options.lease.count() > 0) held->set_lease_deadline(lease_end(*session.state(), granted->sent, options.lease));
  return LockGuard(session.state(), std::move(held));
}

Result<LockGuard> LockGuard::try_acquire(Session& session, std::string name,
                                         LockOptions options) {
  auto granted = acquire_token(*session.state(), name, std::nullopt, options);
  if (!granted) return granted.status();
  auto held = session.state()->register_lock(name, granted->token);
  if (options.lease.count() > 0) held->set_lease_deadline(lease_end(*session.state(), granted->sent, options.lease));
  return LockGuard(session.state(), std::move(held));
}

LockGuard::LockGuard(std::shared_ptr<detail::SessionState> session,
                     std::shared_ptr<detail::HeldLock> held)
    : session_(std::move(session)), held_(std::move(held)) {}

LockGuard::LockGuard(LockGuard&& other) noexcept
    : session_(std::move(other.session_)), held_(std::move(other.held_)) {}

LockGuard& LockGuard::operator=(LockGuard&& other) noexcept {
  if (this != &other) {
    (void)release();
    session_ = std::move(other.session_);
    held_ = std::move(other.held_);
  }
  return *this;
}

LockGuard::~LockGuard() { (void)release(); }

const std::string& LockGuard::name() const {
  static const std::string kNone;
  return held_ ? held_->name() : kNone;
}

std::uint64_t LockGuard::token() const { return held_ ? held_->token() : 0; }
std::uint64_t LockGuard::session_id() const { return session_ ? session_->id : 0; }

bool LockGuard::valid() const { return held_ && !held_->lost() && !session_->ended() && !lease_over(); }

bool LockGuard::lease_over() const { return held_ && Clock::now() >= held_->lease_deadline(); }

Clock::time_point LockGuard::safe_deadline() const {
  if (!held_) return Clock::time_point::min();
  return std::min(session_->deadline(), held_->lease_deadline());
}
bool LockGuard::lost() const { return !valid(); }

Status LockGuard::status() const {
  if (!held_) return Status(ErrorCode::kNotFound, "no lock held");
  if (held_->lost()) return held_->status();
  if (session_->ended()) return session_gone(*session_);
  if (lease_over()) return Status(ErrorCode::kTimedOut, "the lease of lock '" + held_->name() + "' has ended");
  return Status::ok();
}

std::stop_token LockGuard::stop_token() const {
  return held_ ? held_->stop_token() : std::stop_token{};
}

Status LockGuard::release() {
  if (!held_) return Status::ok();
  auto held = std::move(held_);
  auto session = std::move(session_);
  session->unregister_lock(*held);
  if (held->lost() || session->ended()) return Status::ok();
  Status st = session->client->release(held->name(), session->id, held->token(),
                                       session->next_seq());
  held->mark_lost(Status(ErrorCode::kNotFound, "lock '" + held->name() + "' was released"));
  return st;
}

Status LockGuard::extend(Millis lease) {
  if (!held_) return Status(ErrorCode::kNotHolder, "no lock held");
  if (lease.count() <= 0) return Status(ErrorCode::kInvalidArgument, "a lease extension must be > 0");
  if (!valid()) return status();
  const Clock::time_point sent = Clock::now();
  Status st = session_->client->extend(held_->name(), session_->id, held_->token(), lease);
  if (st) held_->set_lease_deadline(lease_end(*session_, sent, lease));
  return st;
}

Result<std::uint64_t> LockGuard::transfer(std::uint64_t to) {
  if (!held_) return Status(ErrorCode::kNotHolder, "no lock held");
  auto token = session_->client->transfer(held_->name(), session_->id, held_->token(), to);
  if (!token) return token.status();
  auto held = std::move(held_);
  auto session = std::move(session_);
  session->unregister_lock(*held);
  held->mark_lost(Status(ErrorCode::kNotFound, "lock '" + held->name() + "' was transferred to session " +
                                                  std::to_string(to)));
  return *token;
}

Result<std::uint64_t> LockGuard::put(std::string_view key, std::string_view value) {
  if (!held_) return Status(ErrorCode::kNotHolder, "no lock held");
  return session_->client->fence_put(key, value, held_->name(), held_->token());
}

}  // namespace leasehold::client
