// etcd/key_queue.h: the fair waiting queue under a key prefix that both the
// election (etcd/election.h) and the lock (etcd/mutex.h) are built on.
//
// A participant holds an etcd lease and owns the key "<prefix>/<lease id in
// hex>", attached to that lease. Keys are ordered by create revision; the
// participant with the lowest one is first. Everyone else watches only its
// predecessor (the key with the next-lower create revision) for deletion,
// so a departure wakes exactly one waiter (no herd). When the lease expires
// or is revoked, etcd deletes the key and the queue moves on.
//
// Thread-safety: free functions; safe to call concurrently (they only use
// the thread-safe Client).
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>

#include "etcd/client.h"
#include "etcd/types.h"
#include "leasehold/status.h"

namespace leasehold::etcd {

// A participant's own key and the create revision that identifies this
// incarnation of it (a re-created key has a new create revision).
struct QueueKey {
  std::string key;
  std::int64_t create_revision = 0;
  std::int64_t lease = 0;
};

// "<prefix>/<lease in lowercase hex>"
std::string queue_key_name(std::string_view prefix, std::int64_t lease);

// The compare that holds only while `mine` still exists as this incarnation
// (create_revision(key) == mine.create_revision): put it in a txn to fence
// a write on still holding the position.
Compare still_owned(const QueueKey& mine);

// Creates the participant's key with `value` unless it exists (then keeps
// its create revision and updates the value). Idempotent: safe to retry
// after an "(outcome unknown)" error.
// Errors: kInvalidArgument (empty prefix, lease 0), client errors.
Result<QueueKey> enqueue(Client& client, std::string_view prefix, std::int64_t lease, std::string_view value);

// Blocks until `mine` is first in the queue.
// Errors: kSessionExpired if `mine` is gone (lease expired or revoked);
// kTimedOut when `deadline` passes or `stop` is requested ("canceled");
// client errors (kUnavailable, ...) as they happen.
Status wait_until_first(Client& client, std::string_view prefix, const QueueKey& mine,
                        std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});

// Deletes `mine` if it is still this incarnation. OK if it is already gone.
Status dequeue(Client& client, const QueueKey& mine);

}  // namespace leasehold::etcd
