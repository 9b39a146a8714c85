// testkit/private_server.h: a third-party server process for a test
// (redis-server, ZooKeeper...) on a free loopback port.
//
// PrivateServer spawns `argv_for(port)` (stdout/stderr to <dir>/<name>.log
// and .err), retrying up to 3 times with another free port (a port can be
// taken between the probe and the bind), and waits for the port to accept
// connections within `ready_within`. ready() says whether that worked; the
// process is killed when the object is destroyed. leasehold servers have
// their own fixture (testkit/server_process.h).
// Thread-safety: none (test thread only).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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

}  // namespace leasehold::testing
