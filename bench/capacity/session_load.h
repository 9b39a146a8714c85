// bench/capacity/session_load.h: the two session workloads of the capacity
// benchmark, against one leasehold server.
//
// open_sessions: `connections` threads, each with its own connection, send
//   SESSION.OPEN ttl in pipelines of `depth` and read the replies, until
//   `count` sessions are open or `deadline` passes. Returns the session ids
//   (in no particular order) and the rate.
// keepalive_load: `connections` connections, spread over `threads` threads;
//   each connection has exactly one SESSION.KEEPALIVE in flight at a time
//   (unpipelined, as a client library sends them), for `duration`, on
//   session ids picked at random from `ids`.
//
// load_nice (0-19): each load thread lowers its own scheduling priority to
//   this nice value first (setpriority on its thread id; no privilege
//   needed). The load shares the machine's cores with the server; at nice 0
//   the kernel makes the server's event loop wait for a core behind the
//   load's threads, which a client on another machine would not cause.
//
// Errors: the first error (socket, timeout, or an error reply) stops the
// workload and is reported in `error`; what completed before it counts.
// Thread-safety: each call blocks until its threads have joined.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/load/resp_connection.h"

namespace leasehold::bench {

struct OpenResult {
  std::vector<std::int64_t> ids;
  double seconds = 0;
  double per_s = 0;
  std::string error;
};

OpenResult open_sessions(const Endpoint& endpoint, std::uint64_t count, std::int64_t ttl_ms, int connections,
                         int depth, std::chrono::steady_clock::time_point deadline,
                         std::chrono::milliseconds io_timeout, int load_nice);

struct KeepaliveResult {
  std::uint64_t done = 0;
  double per_s = 0;
  double p50_ms = -1, p99_ms = -1;  // per KEEPALIVE round trip
  std::string error;
};

KeepaliveResult keepalive_load(const Endpoint& endpoint, const std::vector<std::int64_t>& ids, int connections,
                               int threads, std::chrono::milliseconds duration,
                               std::chrono::milliseconds io_timeout, int load_nice);

}  // namespace leasehold::bench
