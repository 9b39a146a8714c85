// bench/load/zk_lock_client.h: the ZooKeeper lock recipe as a load-driver
// client (optional baseline; needs Debian libzookeeper-mt-dev at build time).
//
// One ZooKeeper session (its own TCP connection) per client. A cycle is the
// recipe from the ZooKeeper documentation: create an ephemeral sequential
// znode `<dir>/lock-`, list `<dir>`; if ours is the lowest we hold the lock,
// otherwise set a watch on the next-lower znode and wait for it to go, then
// list again. Release deletes our znode. Waiters are woken one at a time
// (no herd), in sequence order (FIFO), like leasehold's WAIT 0.
//
// make_zookeeper_lock_client() connects and waits for the session (up to
// `io_timeout`); kUnreachable when it does not come up, kUnavailable when the
// driver was built without the ZooKeeper C client. step() errors carry the
// ZooKeeper error name (e.g. "zoo_create: connection loss").
// Thread-safety: one thread per client; the library's own threads only
// signal the client's condition variable.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "bench/load/lock_clients.h"
#include "bench/load/resp_connection.h"

namespace leasehold::bench {

// True when the driver was built with the ZooKeeper C client.
bool zookeeper_available();

// `lock_dir`: an absolute znode path, created (persistent) when missing.
// `session_timeout_ms`: the ZooKeeper session timeout (the server bounds it).
Result<std::unique_ptr<LockClient>> make_zookeeper_lock_client(
    const Endpoint& endpoint, std::string lock_dir, int session_timeout_ms,
    std::chrono::milliseconds io_timeout);

}  // namespace leasehold::bench
