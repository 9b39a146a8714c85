// client/session_state.h: what a Session shares with its keepalive thread and
// its lock guards (internal).
//
// A SessionState ends exactly once, either LOST (loss callbacks run) or
// CLOSED (no callbacks). Ending requests the stop_source, makes `wake_fd`
// readable for good (so every blocking wait of the session is cut short),
// and marks every registered lock lost.
//
// Thread-safety: all members are safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/client.h"
#include "leasehold/session.h"

namespace leasehold::client::detail {

class Connection;  // client/connection.h

// One lock a guard holds. Shared by the guard and the session's registry.
class HeldLock {
 public:
  HeldLock(std::string name, std::uint64_t token) : name_(std::move(name)), token_(token) {}

  const std::string& name() const { return name_; }
  std::uint64_t token() const { return token_; }
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  Status status() const;
  std::stop_token stop_token() const { return stop_.get_token(); }
  // True for the first caller only.
  bool mark_lost(Status why);
  // The end of the grant's lease as this client bounds it (send time of the
  // request that started or extended it + lease - drift); Clock::time_point::max()
  // without a lease.
  Clock::time_point lease_deadline() const { return Clock::time_point(Clock::duration(lease_ticks_.load())); }
  void set_lease_deadline(Clock::time_point at) { lease_ticks_.store(at.time_since_epoch().count()); }

 private:
  const std::string name_;
  const std::uint64_t token_;
  std::atomic<Clock::rep> lease_ticks_{Clock::time_point::max().time_since_epoch().count()};
  std::atomic<bool> lost_{false};
  std::stop_source stop_;
  mutable std::mutex mu_;
  Status why_;
};

struct SessionState {
  SessionState(std::shared_ptr<Client> client, std::uint64_t id, const SessionOptions& options,
               Clock::time_point first_deadline);
  ~SessionState();
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  const std::shared_ptr<Client> client;
  const std::uint64_t id;
  const Millis ttl;
  const Millis interval;
  const Millis drift;  // drift_margin(options)
  const double drift_factor;  // options.drift_factor, clamped to [0, 1] (also bounds a lease)
  const Millis drift_fixed;   // options.drift_fixed
  const bool bind;     // opened with ONCLOSE: each new keepalive connection is bound (SESSION.KEEPALIVE id BIND)
  const Millis close_grace;  // options.close_grace (0 without ONCLOSE)
  // Session::close() is closing it on the server: an end from now on is
  // not a loss (no on_lost / on_lock_lost), whatever the keepalive thread saw.
  std::atomic<bool> closing{false};
  const int wake_fd;  // eventfd, readable once ended (-1 if it could not be made)

  Clock::time_point deadline() const;
  void set_deadline(Clock::time_point when);
  // ONCLOSE: a connection the session may be bound to is gone (closed by
  // this client, or by a real error under it; never for a timeout alone,
  // see client/parked_connection.h). The server may have seen that close as
  // early as `bound_floor` (the send time of the latest request it answered
  // on that connection, or of the binding request itself) and then ends the
  // session after the close grace: the safe deadline becomes at most
  // bound_floor + close_grace - drift. A re-bind acknowledged later raises
  // it again (set_deadline) if it came first.
  void bound_connection_lost(Clock::time_point bound_floor);
  std::uint64_t next_seq() { return seq_.fetch_add(1) + 1; }

  bool ended() const;  // lost or closed, or the safe deadline has passed
  Status status() const;
  std::stop_token stop_token() const { return stop_.get_token(); }

  // End as lost (callbacks run) or closed. Only the first call counts.
  void end(Status why, bool is_loss);
  // A lost push or a failed re-check for one lock.
  void lock_lost(const std::string& name, std::uint64_t token, Status why);

  std::shared_ptr<HeldLock> register_lock(const std::string& name, std::uint64_t token);
  void unregister_lock(const HeldLock& lock);
  std::vector<std::shared_ptr<HeldLock>> held_locks() const;

  // The keepalive thread's first SESSION.WATCH was acknowledged: from then
  // on, a loss push for this session reaches it. Session::open waits for
  // this (bounded), so a lock taken right after open cannot be revoked
  // before anything listens for its push.
  void mark_watching();
  // Waits until mark_watching() or end(), or until `until`; true if watching.
  bool wait_watching(Clock::time_point until) const;

 private:
  std::function<void(const Status&)> on_lost_;
  std::function<void(const std::string&, std::uint64_t, const Status&)> on_lock_lost_;
  std::atomic<Clock::rep> deadline_ticks_;
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<bool> ended_{false};
  std::stop_source stop_;
  mutable std::mutex mu_;
  Status end_status_;
  bool watching_ = false;
  mutable std::condition_variable watching_cv_;
  std::map<std::pair<std::string, std::uint64_t>, std::shared_ptr<HeldLock>> held_;
};

// The drift margin of `options`: drift_factor x ttl + drift_fixed.
Millis drift_margin(const SessionOptions& options);
// What of a lease of `lease` (from its send time) is safe to rely on: the
// lease minus `drift`, never negative.
inline Millis safe_part(Millis lease, Millis drift) { return lease > drift ? lease - drift : Millis(0); }

// The keepalive thread's body: runs until the state has ended. `bound`, when
// given, is the connection an ONCLOSE session was opened on (so bound to),
// `bound_floor` the send time of that open: the loop watches and keeps the
// session alive on it rather than dialling another. A call on the bound
// connection that times out parks it (kept open) while a new connection is
// dialled and bound; see client/parked_connection.h.
void run_keepalive(const std::shared_ptr<SessionState>& state, std::unique_ptr<Connection> bound = nullptr,
                   Clock::time_point bound_floor = {});

}  // namespace leasehold::client::detail
