// bench/load/redis_benchmark.h: workload W3, Redis's own `redis-benchmark`
// (Debian redis-tools) sending `SET key:<rand> v NX PX lease` to a server.
//
// run_redis_benchmark() starts
//   redis-benchmark -h H -p P -c C -n N -r KEYSPACE --csv SET key:__rand_int__ v NX PX LEASE
// as a child process, reads its output, and returns the requests per second
// it reports. The child is killed (SIGKILL) when it runs past `timeout`.
//
// Errors: kIoError when the child cannot be started or exits non-zero (the
// message quotes its output), kTimedOut when it was killed at the timeout,
// kCorruption when its output has no CSV result line.
// Thread-safety: reentrant; blocks the calling thread while the child runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "bench/load/resp_connection.h"
#include "leasehold/status.h"

namespace leasehold::bench {

struct RedisBenchmarkOptions {
  std::string binary = "redis-benchmark";  // looked up in $PATH
  Endpoint endpoint;
  int clients = 1;
  std::int64_t requests = 10000;
  std::int64_t keyspace = 1000000;  // -r: keys key:000000000000 .. key:<keyspace-1>
  std::int64_t lease_ms = 10000;
  std::chrono::milliseconds timeout{60000};
};

Result<double> run_redis_benchmark(const RedisBenchmarkOptions& options);

// The rps field of the first result line of `redis-benchmark --csv` output:
//   "test","rps",...            (header)
//   "SET ...","84388.19",...    (result)
Result<double> parse_redis_benchmark_csv(std::string_view output);

}  // namespace leasehold::bench
