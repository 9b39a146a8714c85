// leasehold/session.h: a leasehold session that keeps itself alive and
// announces its loss.
//
// Session::open() sends SESSION.OPEN ttl. From then on a background thread,
// on a connection of its own (so a blocking acquire elsewhere never starves
// it), sends SESSION.KEEPALIVE about every ttl/3 and listens for the
// server's pushes (SESSION.WATCH, RESP3).
//
// The SAFE DEADLINE is the steady_clock send time of the last acknowledged
// keepalive plus the TTL the server granted (before the first keepalive: the
// send time of SESSION.OPEN plus the TTL). Until then the server cannot have
// expired the session. The session is LOST at the first of:
//   - a `session-ended` push (expired / killed),
//   - a keepalive answered -EXPIRED,
//   - the safe deadline passing without an acknowledged keepalive
//     (server down, network cut, primary failing over too slowly).
// Loss is signalled exactly once, three ways: the on_lost callback, the
// stop_token (requested), and lost()/status()/safe_deadline(). Every lock
// guard of the session is marked lost with it. This is not one atomic step:
// lost()/status() turn first (so a stop callback can read the reason), then
// the session's stop_token is requested, then each guard is marked lost (its
// lost(), its stop_token, then on_lock_lost), then on_lost runs. Another
// thread that sees lost() may briefly see a stop_token not requested yet. A lock lost on its own
// (`lost` push: revoked, or released by a request that was not this
// client's, reason released-by-other) marks only that lock's guard (and
// calls on_lock_lost).
// After a reconnect of the keepalive connection, or a first watch later than
// a lock taken, pushes sent meanwhile may be missing, so the session re-checks each lock it holds with LOCK.INFO and
// marks the ones it no longer holds lost.
//
// close() (and the destructor) stops the keepalive and sends SESSION.CLOSE
// once, bounded by ClientOptions::call_timeout (by at most 500 ms after a
// loss at the safe deadline, when the server may still keep the session);
// the server then releases the session's locks. A closed session also requests its stop_token, but does
// not call on_lost.
//
// Thread-safety: all const members and close() are safe from any thread.
// Callbacks run on the keepalive thread (or on the thread whose call
// discovered the loss); they must be quick and must not destroy the Session.
// Lock guards may outlive their Session object; they then report lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "leasehold/client.h"
#include "leasehold/status.h"

namespace leasehold::client {

namespace detail {
struct SessionState;
}

struct SessionOptions {
  Millis ttl{10'000};
  std::string owner;              // shown by SESSION.LIST / LOCK.INFO
  Millis keepalive_interval{0};   // 0: ttl / 3
  // ONCLOSE (docs/client.md, "Choosing TTL, close grace and max hold"): when
  // set, the session ends this long after its keepalive connection closes
  // (the process crashed or was killed), so a waiter gets its locks at once
  // instead of after the TTL. The session is bound to each new keepalive
  // connection (after a reconnect or a failover) by its first keepalive.
  // A keepalive that times out closes nothing (silence is not a close): the
  // connection is kept open while a new one is dialled and bound, and
  // closed only once that bind is acknowledged. Trade-off: a bound
  // connection that something resets, or that closes under the client,
  // also ends the session after the grace, and the client cannot tell that
  // from the server's death: then the safe deadline drops to the send time
  // of the last request answered on it + the grace - drift (grace 0: the
  // session is lost at once), until a re-bind on a new connection is
  // acknowledged. Off by default.
  std::optional<Millis> close_grace;
  // The clock drift bound (the contract's, docs/client.md): the safe
  // deadline is the send time of the last acknowledged keepalive plus the
  // TTL MINUS drift_factor x TTL + drift_fixed, so that it holds while the
  // server's monotonic clock runs up to about drift_factor faster than ours.
  double drift_factor = 0.01;
  Millis drift_fixed{2};
  // Called once when the session is lost, with the reason
  // (kSessionExpired: "expired" / "killed"; kTimedOut: deadline passed).
  std::function<void(const Status&)> on_lost;
  // Called once per lock of this session that is lost (revoked, or with the
  // session), with its name and token.
  std::function<void(const std::string& lock, std::uint64_t token, const Status&)> on_lock_lost;
};

class Session {
 public:
  // Opens the session and starts its keepalive thread, then waits (at most
  // the client's call_timeout) until that thread watches the session, so a
  // lock taken next cannot lose its `lost` push. Errors: those of
  // Client::open_session (kUnreachable, kInvalidArgument for a bad TTL, ...).
  static Result<std::unique_ptr<Session>> open(std::shared_ptr<Client> client,
                                               SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::uint64_t id() const;
  Millis ttl() const;
  Client& client() const;

  // See the file comment. Meaningful while !lost().
  Clock::time_point safe_deadline() const;
  // True once lost or closed (also when the safe deadline has passed, even
  // before the keepalive thread noticed).
  bool lost() const;
  // OK while live; otherwise why it ended (kSessionExpired / kTimedOut for a
  // loss, kSessionExpired "closed" after close()).
  Status status() const;
  // Requested when the session is lost or closed.
  std::stop_token stop_token() const;

  // Stops the keepalive and closes the session on the server (bounded).
  // Idempotent; returns the result of SESSION.CLOSE (OK if already closed).
  Status close();

  // For lock guards and elections of this library.
  const std::shared_ptr<detail::SessionState>& state() const { return state_; }

 private:
  explicit Session(std::shared_ptr<detail::SessionState> state);
  std::shared_ptr<detail::SessionState> state_;
  std::thread keepalive_;
  std::mutex close_mu_;
  bool closed_ = false;
};

}  // namespace leasehold::client
