// leasehold/election.h: leader election on a lock plus a fenced value.
//
// A candidate campaigns by acquiring the exclusive lock `election/<name>`
// and then publishing its value (e.g. its address) with FENCE.PUT under the
// key `election/<name>`, tagged with its fencing token. leader() reads the
// current holder (LOCK.INFO) and the published value (FENCE.GET); the value
// counts only when its token equals the holder's token, so a deposed
// leader's stale value is never reported as current.
//
// Leadership ends with resign(), the Election's destruction, or loss of the
// lock (session lost, lock revoked): then is_leader() turns false and
// stop_token() is requested. A new campaign() may follow.
//
// Errors: campaign() returns LockGuard::acquire's errors (kTimedOut when
// another candidate leads for the whole timeout) and FENCE.PUT's
// (kStaleToken if leadership was lost between grant and publish).
// Thread-safety: one thread per Election object at a time; is_leader() and
// stop_token() are safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "leasehold/lock_guard.h"
#include "leasehold/session.h"

namespace leasehold::client {

struct Leader {
  std::uint64_t session = 0;
  std::uint64_t token = 0;
  // The leader's published value; nullopt while it has not published yet.
  std::optional<std::string> value;
};

class Election {
 public:
  // `session` must outlive the Election.
  Election(Session& session, std::string name);
  ~Election();
  Election(const Election&) = delete;
  Election& operator=(const Election&) = delete;

  const std::string& lock_name() const { return lock_name_; }

  // Waits up to `timeout` to lead, then publishes `value`.
  Status campaign(std::string_view value, Millis timeout);
  // Publishes a new value while leading (kNotHolder when not leading).
  Status proclaim(std::string_view value);
  // The current leader as the server sees it; nullopt when nobody leads.
  Result<std::optional<Leader>> leader();
  bool is_leader() const { return guard_.valid(); }
  std::uint64_t token() const { return guard_.token(); }
  std::stop_token stop_token() const { return guard_.stop_token(); }
  // Steps down (releases the lock). OK when not leading.
  Status resign();

 private:
  Session& session_;
  const std::string lock_name_;
  LockGuard guard_;
};

}  // namespace leasehold::client
