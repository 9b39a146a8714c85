// server/net/close_bindings.h: which connection each ONCLOSE session is
// bound to, and the sessions whose bound connection closed and whose close
// grace is running (SESSION.OPEN ... ONCLOSE grace_ms, docs/protocol.md).
//
// A binding is this process's memory only: it is made by SESSION.OPEN with
// ONCLOSE and by SESSION.KEEPALIVE id BIND, on the primary that answered.
// A new primary has no bindings, so a failover never ends a session; the
// client re-binds on its new connection. When the peer closes a bound
// connection (its FIN or RST, a broken write, a TLS close_notify, QUIT;
// silence is not a close), its sessions end after their grace: `end` is
// called with each, once, when its grace passed, and the server proposes
// ConnectionClosed through the log. A keepalive or a re-bind during the
// grace cancels the pending end. A close of this server's own only unbinds.
// From the moment its end is proposed until that is applied (or refused),
// a session is `ending`: keepalives must be refused then, as for a session
// whose expiry is proposed, or a keepalive answered meanwhile would promise
// the client a TTL the log is about to take away.
//
// Ownership: owns one loop timer (open() .. close()). Thread-safety: loop
// thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/types.h"

namespace leasehold::server {

class CloseBindings {
 public:
  using EndSession = std::function<void(core::SessionId)>;
  // The session's close grace, or nullopt when it is not live or has none.
  using GraceOf = std::function<std::optional<std::uint32_t>(core::SessionId)>;

  CloseBindings() = default;
  ~CloseBindings() = default;
  CloseBindings(const CloseBindings&) = delete;
  CloseBindings& operator=(const CloseBindings&) = delete;

  // The timer runs on `loop` (the object must not move afterwards).
  void open(uv_loop_t* loop, EndSession end);
  // Stops the timer and drops every pending end (shutdown). Idempotent.
  void close();

  // Binds `session` to connection `conn` (replacing an earlier binding) and
  // cancels its pending end, if any.
  void bind(core::SessionId session, std::uint64_t conn);
  // A keepalive of `session`: cancels its pending end, if any.
  void keepalive(core::SessionId session);
  // Connection `conn` closed. When the peer closed it (`by_peer`), every
  // session still bound to it ends after grace_of(session) (skipped when
  // nullopt). When this server closed it (idle timeout, output limit,
  // protocol error, shutdown), its sessions are only unbound:
  // the client is alive, so only its TTL may end them.
  void connection_closed(std::uint64_t conn, bool by_peer, const GraceOf& grace_of);
  // `session` ended (by any cause): forgets it.
  void session_ended(core::SessionId session);
  // The proposed end of `session` was refused (e.g. no longer primary): it
  // is no longer `ending`.
  void end_failed(core::SessionId session) { ending_.erase(session); }

  bool bound(core::SessionId session) const { return conn_of_.contains(session); }
  // `end` was called for `session` and it has not ended yet.
  bool ending(core::SessionId session) const { return ending_.contains(session); }
  std::size_t pending() const { return pending_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  using Due = std::multimap<Clock::time_point, core::SessionId>;
  void cancel(core::SessionId session);
  void unbind(core::SessionId session);
  void arm();
  void fire();

  uv_loop_t* loop_ = nullptr;
  uv_timer_t timer_{};
  EndSession end_;
  std::unordered_map<core::SessionId, std::uint64_t> conn_of_;
  std::unordered_map<std::uint64_t, std::vector<core::SessionId>> sessions_of_;
  Due due_;
  std::unordered_map<core::SessionId, Due::iterator> pending_;
  std::unordered_set<core::SessionId> ending_;
};

}  // namespace leasehold::server
