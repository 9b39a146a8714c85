// The keepalive thread of a Session: SESSION.WATCH + SESSION.KEEPALIVE on a
// dedicated connection, pushes dispatched to the SessionState.
#include <algorithm>
#include <optional>
#include <string>

#include "client/client_core.h"
#include "client/decode.h"
#include "client/parked_connection.h"
#include "client/session_state.h"
#include "common/assert.h"

namespace leasehold::client::detail {
namespace {

// The status a lock/session loss reason maps to: the lock was taken away
// (revoked, replaced, released by another request) or the session ended.
Status reason_status(const std::string& what, const std::string& reason) {
  if (reason == "revoked" || reason == "replaced" || reason == "released-by-other" || reason == "lease-ended" ||
      reason == "transferred") {
    return Status(ErrorCode::kNotHolder, what + " " + reason);
  }
  return Status(ErrorCode::kSessionExpired, what + " " + reason);
}

void handle_push(SessionState& st, const resp::Value& push) {
  const auto& e = push.elements;
  if (e.size() < 2 || e[0].str != "leasehold") return;
  auto session = e.size() > 2 ? decode_integer(e[2], "push session") : Result<std::int64_t>(-1);
  if (!session || static_cast<std::uint64_t>(*session) != st.id) return;
  if (e[1].str == "lost" && e.size() >= 6) {
    auto token = decode_integer(e[4], "push token");
    if (!token) return;
    const std::string& lock = e[3].str;
    st.lock_lost(lock, static_cast<std::uint64_t>(*token),
                 reason_status("lock '" + lock + "' token " + std::to_string(*token), e[5].str));
  } else if (e[1].str == "session-ended" && e.size() >= 4) {
    st.end(reason_status("session " + std::to_string(st.id), e[3].str), true);
  }
}

// After a reconnect, pushes may have been missed: check each held lock.
void recheck_locks(SessionState& st) {
  for (const auto& held : st.held_locks()) {
    if (held->lost()) continue;
    auto info = st.client->lock_info(held->name());
    if (!info) continue;  // cannot tell now; the next reconnect checks again
    bool still_held = false;
    if (*info) {
      for (const auto& h : (*info)->holders) {
        still_held = still_held || (h.session == st.id && h.token == held->token());
      }
    }
    if (!still_held) {
      st.lock_lost(held->name(), held->token(),
                   Status(ErrorCode::kNotHolder, "lock '" + held->name() +
                                                     "' is no longer held (found after reconnect)"));
    }
  }
}

class KeepaliveLoop {
 public:
  KeepaliveLoop(const std::shared_ptr<SessionState>& st, std::unique_ptr<Connection> bound,
                Clock::time_point bound_floor)
      : st_(*st),
        core_(st->client->core()),
        backoff_(core_.options().backoff_initial, core_.options().backoff_max),
        next_keepalive_(Clock::now() + st->interval),
        parked_(st->wake_fd) {
    if (bound) {
      bound_floor_ = bound_floor;
      conn_bound_ = true;  // the open bound it
      watch(std::move(bound), false);
    }
  }

  void run() {
    while (!st_.ended()) {
      check_parked();
      if (st_.ended()) break;
      if (!conn_) {
        connect();
      } else if (Clock::now() >= next_keepalive_) {
        keepalive();
      } else {
        wait_for_push();
      }
    }
    if (Clock::now() >= st_.deadline()) {  // no-op when it ended otherwise first
      st_.end(Status(ErrorCode::kTimedOut,
                     "session " + std::to_string(st_.id) +
                         ": no keepalive acknowledged before the safe deadline"),
              true);
    }
  }

 private:
  Clock::time_point bound(Millis budget) const {
    return std::min(st_.deadline(), Clock::now() + budget);
  }

  void pause() { pause_interruptibly(backoff_.next(), st_.deadline(), parked_.interrupt_fd()); }

  // An error reply to WATCH or KEEPALIVE; the connection is dropped.
  void on_error_reply(const resp::Value& reply) {
    Status st = status_from_error_reply(reply.str);
    if (st.code() == ErrorCode::kSessionExpired) {
      st_.end(Status(ErrorCode::kSessionExpired,
                     "session " + std::to_string(st_.id) + " expired: " + st.message()),
              true);
    } else if (st.code() == ErrorCode::kRedirect) {
      (void)core_.note_redirect(st.message(), conn_ && conn_->endpoint().tls);
    } else {
      pause();
    }
    drop();
  }

  // ONCLOSE: a connection the session may be bound to was closed, by this
  // client or by a real error under it. The server ends the session after
  // the close grace, counted from no earlier than `floor`: the safe
  // deadline shrinks to match.
  void bound_connection_lost(Clock::time_point floor) {
    if (st_.ended()) return;
    st_.bound_connection_lost(floor);
    if (Clock::now() >= st_.deadline()) {  // e.g. grace 0: lost now, for this reason
      st_.end(Status(ErrorCode::kTimedOut,
                     "session " + std::to_string(st_.id) + ": its ONCLOSE connection was lost and its close grace (" +
                         std::to_string(st_.close_grace.count()) +
                         " ms) is over, so the server may have ended it (safe deadline lowered)"),
              true);
    }
  }

  // conn_ is gone or no longer trusted: closed, which for an ONCLOSE
  // session bound to it is a close the server counts.
  void drop() {
    if (bound_floor_) bound_connection_lost(*bound_floor_);
    bound_floor_.reset();
    conn_bound_ = false;
    conn_.reset();
  }

  // A call on conn_ failed. A timeout is silence, not a close: a connection
  // the session is bound to is parked (kept open, client/parked_connection.h)
  // and a new one dialled and bound; anything else drops it.
  void failed(const Status& why) {
    if (why.code() != ErrorCode::kTimedOut || !conn_bound_ || !parked_.usable()) {
      drop();
      return;
    }
    // A bound conn_ means its BIND was acknowledged, which released the
    // parked one: at most the bound connection and one candidate are open.
    LEASEHOLD_ASSERT(parked_.empty() && bound_floor_, "session {}: a second connection to park", st_.id);
    parked_.park(std::move(conn_), *bound_floor_);
    bound_floor_.reset();
    conn_bound_ = false;
  }

  // The parked connection hung up: the server may have seen the client's
  // side close it while the session was still bound to it.
  void check_parked() {
    if (!parked_.hung_up()) return;
    const Clock::time_point floor = parked_.floor();
    parked_.release();
    bound_connection_lost(floor);
  }

  // An ONCLOSE request sent at `sent` on conn_ was answered: the server saw
  // the connection open at or after `sent`.
  void answered(Clock::time_point sent) {
    if (bound_floor_) bound_floor_ = std::max(*bound_floor_, sent);
  }

  // One request on conn_, answered by `until` (and by the safe deadline,
  // which a hang-up of the parked connection may lower meanwhile). Pushes
  // meanwhile are dispatched; a hang-up of the parked connection is acted
  // on without giving up the request.
  Result<resp::Value> call(const std::vector<std::string>& args, Clock::time_point until) {
    if (Status sent = conn_->send(args, until, st_.wake_fd); !sent) return sent;
    while (true) {
      auto ready = conn_->wait_readable(std::min(until, st_.deadline()), parked_.interrupt_fd());
      if (!ready) {
        if (!is_interrupted(ready.status()) || st_.ended()) return ready.status();
        check_parked();
        continue;
      }
      if (!*ready) {
        return Status(ErrorCode::kTimedOut, "no reply from " + conn_->endpoint().to_string() + " before the deadline");
      }
      auto value = conn_->read(until, st_.wake_fd);
      if (!value || value->type != resp::Type::kPush) return value;
      handle_push(st_, *value);
    }
  }

  void connect() {
    auto conn = core_.dial(bound(core_.options().connect_timeout), parked_.interrupt_fd());
    if (!conn) {
      if (!is_interrupted(conn.status())) pause();
      return;  // interrupted: run() looks at the parked connection or ends
    }
    watch(std::move(*conn), true);
  }

  // SESSION.WATCH on `conn`, which becomes conn_. `dialled`: a new connection
  // (not the one the session was opened on), which an ONCLOSE session binds
  // with its next keepalive.
  void watch(std::unique_ptr<Connection> conn, bool dialled) {
    const auto sent = Clock::now();
    conn_ = std::move(conn);
    auto reply = call({"SESSION.WATCH", std::to_string(st_.id)}, bound(core_.options().call_timeout));
    if (!reply) {
      failed(reply.status());
      if (!is_interrupted(reply.status())) pause();
      return;
    }
    answered(sent);
    if (reply->is_error()) {
      on_error_reply(*reply);
      return;
    }
    // Pushes sent before this watch were missed: after a reconnect, or when
    // a lock was taken before the first watch (a slow open), re-check every
    // held lock once the next keepalive shows the session alive.
    if (watched_before_ || !st_.held_locks().empty()) {
      recheck_pending_ = true;
      next_keepalive_ = Clock::now();  // learn at once whether the session survived
    }
    // ONCLOSE: bind the session to a new connection at once (after a
    // reconnect or a failover the session is bound to none, or to the
    // parked connection).
    if (st_.bind && dialled) next_keepalive_ = Clock::now();
    watched_before_ = true;
    st_.mark_watching();
  }

  void keepalive() {
    const auto sent = Clock::now();
    std::vector<std::string> args{"SESSION.KEEPALIVE", std::to_string(st_.id)};
    // ONCLOSE: the first keepalive on a connection binds the session to it.
    // Its answer is awaited until the safe deadline, not the call timeout:
    // while its outcome is unknown the session may be bound to conn_, which
    // then must not be closed, nor replaced by another connection whose BIND
    // this late one could overtake. Later keepalives carry no BIND, so a late
    // one never moves the binding back to a parked connection.
    const bool binding = st_.bind && !conn_bound_;
    if (binding) {
      args.emplace_back("BIND");
      bound_floor_ = sent;  // bound from here on, if the server reads it
    }
    auto reply = call(args, binding ? st_.deadline() : bound(core_.options().call_timeout));
    if (!reply) {
      failed(reply.status());
      return;
    }
    answered(sent);
    if (reply->is_error()) {
      // An error changes nothing: a refused BIND (-REDIRECT, -TRYAGAIN...)
      // did not bind conn_, so closing it costs nothing.
      if (binding) bound_floor_.reset();
      on_error_reply(*reply);
      return;
    }
    auto remaining = decode_integer(*reply, "SESSION.KEEPALIVE");
    if (!remaining || (binding && *remaining <= 0)) {
      drop();
      return;
    }
    if (binding) {
      conn_bound_ = true;
      parked_.release();  // the session is bound to conn_ now: the parked one's close no longer counts
    }
    st_.set_deadline(sent + safe_part(std::min(Millis(*remaining), st_.ttl), st_.drift));
    next_keepalive_ = sent + st_.interval;
    backoff_.reset();
    if (recheck_pending_) {
      recheck_pending_ = false;
      recheck_locks(st_);
    }
  }

  void wait_for_push() {
    auto ready = conn_->wait_readable(std::min(next_keepalive_, st_.deadline()), parked_.interrupt_fd());
    if (!ready) {
      if (!is_interrupted(ready.status())) failed(ready.status());
      return;  // interrupted: run() looks at the parked connection or ends
    }
    if (!*ready) return;
    auto value = conn_->read(bound(core_.options().call_timeout), st_.wake_fd);
    if (!value) {
      failed(value.status());  // e.g. the server's side closed: for ONCLOSE, the grace is running
      return;
    }
    if (value->type == resp::Type::kPush) handle_push(st_, *value);
  }

  SessionState& st_;
  ClientCore& core_;
  Backoff backoff_;
  Clock::time_point next_keepalive_;
  std::unique_ptr<Connection> conn_;
  // ONCLOSE: the session may be bound to conn_ (the open or a BIND was sent
  // on it), and the server saw conn_ open no earlier than this.
  std::optional<Clock::time_point> bound_floor_;
  // ONCLOSE: conn_'s binding was acknowledged (its open or BIND answered).
  bool conn_bound_ = false;
  // ONCLOSE: the connection bound before conn_, while conn_'s BIND is not
  // acknowledged yet.
  ParkedConnection parked_;
  bool watched_before_ = false;
  bool recheck_pending_ = false;
};

}  // namespace

void run_keepalive(const std::shared_ptr<SessionState>& state, std::unique_ptr<Connection> bound,
                   Clock::time_point bound_floor) {
  KeepaliveLoop(state, std::move(bound), bound_floor).run();
}

}  // namespace leasehold::client::detail
