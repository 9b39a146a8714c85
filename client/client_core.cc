#include "client/client_core.h"

#include <poll.h>

#include <algorithm>

namespace leasehold::client::detail {

Millis Backoff::next() {
  Millis cap = initial_;
  for (int i = 0; i < attempt_ && cap < max_; ++i) cap *= 2;
  cap = std::min(cap, max_);
  if (attempt_ < 30) ++attempt_;
  const auto lo = cap.count() / 2;
  std::uniform_int_distribution<long> pick(lo, std::max<long>(lo, cap.count()));
  return Millis(pick(rng_));
}

bool pause_interruptibly(Millis pause, Deadline deadline, int interrupt_fd) {
  auto until = Clock::now() + pause;
  if (deadline) until = std::min(until, *deadline);
  while (true) {
    auto left = std::chrono::ceil<Millis>(until - Clock::now()).count();
    if (left <= 0) return true;
    pollfd p{interrupt_fd, POLLIN, 0};
    int n = ::poll(&p, interrupt_fd >= 0 ? 1 : 0, static_cast<int>(std::min<long>(left, 60'000)));
    if (n > 0) return false;
  }
}

std::string ClientCore::current_endpoint() const {
  std::lock_guard lock(mu_);
  return current_;
}

Status ClientCore::note_redirect(const std::string& target, bool tls) {
  auto ep = parse_endpoint(target);
  if (!ep) return Status(ErrorCode::kRedirect, "bad redirect target '" + target + "'");
  ep->tls = ep->tls || tls;  // the redirect keeps the scheme of the endpoint that answered
  std::lock_guard lock(mu_);
  redirect_ = *ep;
  return Status::ok();
}

Result<std::shared_ptr<TlsClientContext>> ClientCore::tls_context() {
  std::lock_guard lock(mu_);
  if (!tls_) {
    auto ctx = TlsClientContext::create(options_);
    if (!ctx) return ctx.status();
    tls_ = std::move(ctx).value();
  }
  return tls_;
}

Result<std::unique_ptr<Connection>> ClientCore::dial_once(Clock::time_point deadline,
                                                          int interrupt_fd) {
  std::vector<Endpoint> order;
  std::optional<Endpoint> redirect;
  std::size_t start = 0;
  {
    std::lock_guard lock(mu_);
    redirect = redirect_;
    start = next_index_;
  }
  if (redirect) order.push_back(*redirect);
  const auto& eps = options_.endpoints;
  for (std::size_t i = 0; i < eps.size(); ++i) order.push_back(eps[(start + i) % eps.size()]);

  Status last(ErrorCode::kUnreachable, "no endpoint");
  for (const Endpoint& ep : order) {
    const auto per_try = std::min(deadline, Clock::now() + options_.connect_timeout);
    Handshake handshake{options_.name, options_.user, options_.password, nullptr};
    if (ep.tls) {
      auto tls = tls_context();
      if (!tls) return tls.status();
      handshake.tls = std::move(tls).value();
    }
    auto conn = Connection::dial(ep, per_try, interrupt_fd, handshake);
    if (conn) {
      std::lock_guard lock(mu_);
      current_ = ep.to_string();
      auto it = std::find(eps.begin(), eps.end(), ep);
      if (it != eps.end()) next_index_ = static_cast<std::size_t>(it - eps.begin());
      return conn;
    }
    last = conn.status();
    if (is_interrupted(last)) return last;
    if (last.code() == ErrorCode::kRedirect) {
      if (Status st = note_redirect(last.message(), ep.tls); !st) return st;
      return last;  // the caller dials again, now preferring the named primary
    }
    // A refused password or an untrusted certificate: another endpoint or a
    // retry will not help (and must not be hidden as "unreachable").
    if (last.code() == ErrorCode::kInvalidArgument) return last;
    if (redirect && ep == *redirect) {
      std::lock_guard lock(mu_);
      if (redirect_ && *redirect_ == ep) redirect_.reset();
    }
    if (Clock::now() >= deadline) break;
  }
  return Status(ErrorCode::kUnreachable, "no leasehold server reachable (" + last.message() + ")");
}

Result<std::unique_ptr<Connection>> ClientCore::dial(Clock::time_point deadline, int interrupt_fd) {
  Backoff backoff(options_.backoff_initial, options_.backoff_max);
  int redirects = 0;
  while (true) {
    auto conn = dial_once(deadline, interrupt_fd);
    if (conn || is_interrupted(conn.status())) return conn;
    if (conn.status().code() == ErrorCode::kRedirect && ++redirects <= options_.max_redirects) {
      continue;
    }
    if (conn.status().code() != ErrorCode::kUnreachable &&
        conn.status().code() != ErrorCode::kTimedOut) {
      return conn;  // e.g. the server refused HELLO: retrying will not help
    }
    if (Clock::now() >= deadline) return conn;
    if (!pause_interruptibly(backoff.next(), deadline, interrupt_fd)) return interrupted_status();
    if (Clock::now() >= deadline) return conn;
  }
}

Result<std::unique_ptr<Connection>> ClientCore::checkout(Clock::time_point dial_deadline,
                                                         int interrupt_fd) {
  {
    std::unique_lock lock(mu_);
    while (true) {
      while (!idle_.empty()) {
        std::unique_ptr<Connection> conn = std::move(idle_.back());
        idle_.pop_back();
        const bool preferred = !redirect_ || conn->endpoint() == *redirect_;
        if (preferred && conn->healthy_for_reuse()) return conn;
        --open_;  // stale or not the primary: drop it
      }
      if (open_ < options_.max_connections) break;
      if (pool_cv_.wait_until(lock, dial_deadline) == std::cv_status::timeout) {
        return Status(ErrorCode::kTimedOut, "all pooled connections are busy");
      }
    }
    ++open_;
  }
  auto conn = dial(dial_deadline, interrupt_fd);
  if (!conn) forget_one();
  return conn;
}

void ClientCore::forget_one() {
  {
    std::lock_guard lock(mu_);
    --open_;
  }
  pool_cv_.notify_one();
}

void ClientCore::checkin(std::unique_ptr<Connection> conn) {
  if (conn->broken()) {
    conn.reset();
    forget_one();
    return;
  }
  {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(conn));
  }
  pool_cv_.notify_one();
}

Result<resp::Value> ClientCore::call(const std::vector<std::string>& args, const CallSpec& spec) {
  Backoff backoff(options_.backoff_initial, options_.backoff_max);
  int redirects = 0;
  const auto dial_deadline = [&] {
    auto d = Clock::now() + options_.call_timeout;
    return spec.deadline ? std::min(d, *spec.deadline) : d;
  };
  while (true) {
    auto conn = checkout(dial_deadline(), spec.interrupt_fd);
    if (!conn) return conn.status();
    auto reply = (*conn)->roundtrip(args, spec.deadline, spec.interrupt_fd, {});
    const bool tls = (*conn)->endpoint().tls;
    checkin(std::move(*conn));
    if (!reply) {
      const Status& st = reply.status();
      if (is_interrupted(st) || st.code() == ErrorCode::kTimedOut) return st;
      const bool time_left = !spec.deadline || Clock::now() < *spec.deadline;
      if (spec.retry == Retry::kSafe && st.code() == ErrorCode::kUnreachable && time_left) {
        if (!pause_interruptibly(backoff.next(), spec.deadline, spec.interrupt_fd)) {
          return interrupted_status();
        }
        if (spec.retries != nullptr) ++*spec.retries;
        continue;
      }
      return st;
    }
    if (reply->is_error()) {
      Status st = status_from_error_reply(reply->str);
      if (st.code() == ErrorCode::kRedirect && ++redirects <= options_.max_redirects) {
        if (Status noted = note_redirect(st.message(), tls); !noted) return noted;
        continue;
      }
      if (st.code() == ErrorCode::kRedirect) {
        return Status(ErrorCode::kRedirect, "too many redirects (last: " + st.message() + ")");
      }
      return st;
    }
    return reply;
  }
}

}  // namespace leasehold::client::detail
