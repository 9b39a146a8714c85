// tests/bench/private_server.h: a server process of the benchmark smoke
// tests (redis-server, ZooKeeper) on a free loopback port, and the short
// cell the tests run against it.
//
// PrivateServer spawns `argv_for(port)` (stdout/stderr to <dir>/<name>.log
// and .err), retrying up to 3 times with another free port (a port can be
// taken between the probe and the bind), and waits for the port to accept
// connections within `ready_within`. ready() says whether that worked; the
// process is killed when the object is destroyed.
// Thread-safety: none (test thread only).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/load/load_runner.h"
#include "testkit/net.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

class PrivateServer {
 public:
  PrivateServer(const TempDir& dir, const std::string& name,
                const std::function<std::vector<std::string>(std::uint16_t port)>& argv_for,
                std::chrono::milliseconds ready_within) {
    for (int attempt = 0; attempt < 3 && !ready_; ++attempt) {
      port_ = free_port();
      SpawnOptions opt;
      opt.stdout_path = dir.file(name + ".log");
      opt.stderr_path = dir.file(name + ".err");
      auto p = Subprocess::spawn(argv_for(port_), opt);
      if (!p) continue;
      process_ = std::move(p).value();
      ready_ = wait_for_port(port_, ready_within);
      if (!ready_) process_.kill9();
    }
  }
  bool ready() const { return ready_; }
  std::uint16_t port() const { return port_; }

 private:
  Subprocess process_;
  std::uint16_t port_ = 0;
  bool ready_ = false;
};

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
