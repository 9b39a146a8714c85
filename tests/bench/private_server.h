// tests/bench/private_server.h: the short cell the benchmark smoke tests
// run against a server (testkit/private_server.h starts third-party ones).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "bench/load/load_runner.h"
#include "testkit/private_server.h"

namespace leasehold::testing {

// A short cell (100 ms warm-up) of `clients` clients against 127.0.0.1:port.
inline bench::CellOptions short_cell(bench::System system, bench::Workload workload, std::uint16_t port,
                                     int clients, std::chrono::milliseconds duration, std::string prefix) {
  bench::CellOptions o;
  o.system = system;
  o.workload = workload;
  o.endpoint = bench::Endpoint{"127.0.0.1", port};
  o.clients = clients;
  o.warmup = std::chrono::milliseconds(100);
  o.duration = duration;
  o.name_prefix = std::move(prefix);
  return o;
}

}  // namespace leasehold::testing
