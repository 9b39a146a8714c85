// bench/capacity/server_run.h: one `leasehold server` process for the
// capacity benchmark: start it on a free loopback port (retrying another
// port when the bind loses a race), wait until it answers PING, read its RSS
// and INFO fields, stop it cleanly (SIGTERM) or kill it (SIGKILL).
//
// Errors: start() returns kUnavailable when the server did not answer PING
// before the deadline (its log is at `log_path`). Every wait is bounded.
// Thread-safety: one controlling thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/load/resp_connection.h"
#include "demo/child_process.h"

namespace leasehold::bench {

struct ServerSpec {
  std::string binary;                  // path of `leasehold`
  std::string data_dir;
  std::string log_path;                // stdout+stderr appended here
  std::vector<std::string> extra_args; // e.g. --max-sessions N
};

class ServerRun {
 public:
  explicit ServerRun(ServerSpec spec) : spec_(std::move(spec)) {}

  // Starts the server (a new port unless `keep_port`) and waits for PONG.
  Status start(std::chrono::steady_clock::time_point deadline, bool keep_port = false);
  // SIGTERM (clean) or SIGKILL, then waits for the exit.
  Status stop(int signal, std::chrono::steady_clock::time_point deadline);

  const Endpoint& endpoint() const { return endpoint_; }
  pid_t pid() const { return child_.pid(); }
  // VmRSS of the server in bytes; 0 when it cannot be read.
  std::uint64_t rss_bytes() const;
  // An integer field of INFO ("sessions", "snapshots_saved"); nullopt when
  // the server did not answer or has no such field.
  std::optional<std::int64_t> info_field(const std::string& key, std::chrono::milliseconds io_timeout) const;
  // A numeric field of INFO, integer or not ("loop_longest_turn_ms").
  std::optional<double> info_number(const std::string& key, std::chrono::milliseconds io_timeout) const;

 private:
  ServerSpec spec_;
  Endpoint endpoint_;
  demo::ChildProcess child_;
};

}  // namespace leasehold::bench
