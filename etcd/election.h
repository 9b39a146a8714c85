// etcd/election.h: leader election on etcd (the recipe of DESIGN.md 3a).
//
// Recipe: each candidate holds an etcd lease (kept alive by the caller,
// e.g. with LeaseKeepAlive) and puts "<prefix>/<lease hex>" attached to it
// in a txn guarded by create_revision == 0. The key with the lowest create
// revision leads. Every other candidate watches only its predecessor (next
// lower create revision) for deletion, then re-checks: no herd. A leader
// that dies stops its keepalives; etcd deletes its key when the lease
// expires, and the next candidate takes over.
//
// Fencing: the leader's QueueKey (key + create revision) identifies this
// term of leadership. Every write the leader makes (the log append) is a
// txn that includes still_owned(leader_key), i.e. create_revision(key) ==
// my create revision: once the lease is gone (expired, revoked) the key is
// deleted, and even a paused ex-leader's write fails instead of landing.
// Being told "you lead" is a hint; the guarded txn is the proof.
//
// Thread-safety: one thread at a time per Election object (campaign and
// resign change its state); leader() may run concurrently with anything.
// The Client must outlive the Election.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "etcd/client.h"
#include "etcd/key_queue.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

// Who leads, as seen at `revision`.
struct Leader {
  std::string key;
  std::string value;                 // what the leader campaigned with (e.g. its address)
  std::int64_t create_revision = 0;  // the leader's term: fence on this
  std::int64_t lease = 0;
  std::int64_t revision = 0;         // store revision of the observation
};

class Election {
 public:
  // `prefix` e.g. "/leasehold/<cluster>/election" (no trailing '/').
  Election(Client& client, std::string prefix);

  // Joins (or re-joins, idempotently) the election with `lease` and `value`
  // and blocks until this candidate leads. Returns the leader key to fence
  // with. Errors: kTimedOut when `deadline` passes or `stop` is requested
  // (the candidate's key is then deleted, best effort); kSessionExpired
  // when the key vanished (lease expired/revoked); kUnavailable and other
  // client errors (the key may remain: call campaign again or revoke the
  // lease).
  Result<QueueKey> campaign(std::int64_t lease, std::string_view value,
                            std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});

  // Leaves the election (deletes the own key if it is still this term).
  // OK when not campaigning or already gone.
  Status resign();

  // The current leader, nullopt when nobody campaigns.
  Result<std::optional<Leader>> leader();

  // The own key once campaign() enqueued it (also while still waiting).
  const std::optional<QueueKey>& own_key() const { return mine_; }
  const std::string& prefix() const { return prefix_; }

 private:
  Client& client_;
  std::string prefix_;
  std::optional<QueueKey> mine_;
};

}  // namespace leasehold::etcd
