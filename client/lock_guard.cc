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

// try: `timeout` unset.
Result<std::pair<std::uint64_t, int>> acquire_token(detail::SessionState& st,
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
                               options.delay, st.next_seq()};
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
    if (*r) return std::make_pair(**r, retries);
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
  auto token = acquire_token(*session.state(), name, timeout, options);
  if (!token) return token.status();
  auto held = session.state()->register_lock(name, token->first);
  return LockGuard(session.state(), std::move(held));
}

Result<LockGuard> LockGuard::try_acquire(Session& session, std::string name,
                                         LockOptions options) {
  auto token = acquire_token(*session.state(), name, std::nullopt, options);
  if (!token) return token.status();
  auto held = session.state()->register_lock(name, token->first);
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

bool LockGuard::valid() const { return held_ && !held_->lost() && !session_->ended(); }
bool LockGuard::lost() const { return !valid(); }

Status LockGuard::status() const {
  if (!held_) return Status(ErrorCode::kNotFound, "no lock held");
  if (held_->lost()) return held_->status();
  if (session_->ended()) return session_gone(*session_);
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

Result<std::uint64_t> LockGuard::put(std::string_view key, std::string_view value) {
  if (!held_) return Status(ErrorCode::kNotHolder, "no lock held");
  return session_->client->fence_put(key, value, held_->name(), held_->token());
}

}  // namespace leasehold::client
