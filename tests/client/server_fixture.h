// tests/client/server_fixture.h: one real `leasehold server` process on a
// free loopback port, restartable on the same port and data dir.
#pragma once

#include <csignal>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/net.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace leasehold::testing {

class LeaseholdServer {
 public:
  explicit LeaseholdServer(const TempDir& dir) : data_dir_(dir.file("data")), log_(dir.file("server.log")) {}

  // Starts on a fresh port (retrying if it was taken). False on failure.
  bool start() {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      if (restart()) return true;
    }
    return false;
  }
  // Starts again on the same port and data dir.
  bool restart() {
    SpawnOptions opts;
    opts.stderr_path = log_;
    opts.stdout_path = log_ + ".out";
    auto p = Subprocess::spawn({leasehold_binary(), "server", "--listen", loopback(port_),
                                "--data-dir", data_dir_, "--log-level", "warn"},
                               opts);
    if (!p) return false;
    process_ = std::move(p).value();
    if (wait_for_port(port_, std::chrono::seconds(10))) return true;
    process_.kill9();
    return false;
  }
  void kill9() { process_.kill9(); }
  void stop() {
    process_.signal(SIGTERM);
    if (!process_.wait(std::chrono::seconds(10))) process_.kill9();
  }
  void pause() { process_.signal(SIGSTOP); }
  void resume() { process_.signal(SIGCONT); }

  std::uint16_t port() const { return port_; }
  std::string endpoint() const { return loopback(port_); }
  const std::string& log_path() const { return log_; }

 private:
  std::string data_dir_;
  std::string log_;
  std::uint16_t port_ = 0;
  Subprocess process_;
};

}  // namespace leasehold::testing
