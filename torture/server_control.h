// torture/server_control.h: the embedded `leasehold server` of a torture
// run, on one fixed loopback port for the whole run so that clients
// reconnect to it after a kill -9 and restart.
//
// start() picks a free port (up to 5 tries); restart() reuses it (retrying while the
// old socket lingers). Extra server flags (e.g. the `faults` branch's
// `--unsafe-test-fault NAME`) and extra environment (LD_PRELOAD of a
// fault shim, FAKETIME ...) are given at construction and apply to every
// (re)start.
// Errors: start()/restart() return kUnavailable when the server did not
// answer on its port in time.
// Thread-safety: one owner thread (the nemesis and the harness take turns).
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"
#include "testkit/subprocess.h"

namespace leasehold::torture {

struct ServerSpec {
  std::string data_dir;
  std::vector<std::string> extra_flags;
  std::vector<std::pair<std::string, std::string>> env;
  std::string stderr_path;  // appended over restarts
};

class ServerControl {
 public:
  explicit ServerControl(ServerSpec spec) : spec_(std::move(spec)) {}
  Status start();
  Status restart();  // after kill9()
  void kill9() { process_.kill9(); }
  void pause() { process_.signal(SIGSTOP); }
  void resume() { process_.signal(SIGCONT); }
  // SIGTERM and wait; SIGKILL if it does not stop in time.
  void stop();
  std::uint16_t port() const { return port_; }
  std::string endpoint() const;
  bool running() { return process_.running(); }

 private:
  Status spawn_and_wait();
  ServerSpec spec_;
  std::uint16_t port_ = 0;
  testing::Subprocess process_;
};

}  // namespace leasehold::torture
