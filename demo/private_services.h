// demo/private_services.h: the throwaway services the demo starts for itself
// when the user names none: a leasehold server (the demo's own binary,
// `leasehold server`) and a PostgreSQL cluster (initdb + pg_ctl). Both live
// in /tmp scratch directories, listen on 127.0.0.1 only, on free ports, and
// are stopped and deleted when the object dies.
//
// PostgreSQL refuses to run as root; as root the cluster runs as the
// `postgres` system user (which must exist: the demo creates no users).
// It runs with fsync off: the demo shows fencing, not PostgreSQL's disk.
//
// Errors: kUnavailable (binaries missing, no postgres user, the service did
// not come up; the message carries the service's log tail), kIoError.
// Thread-safety: one owner per object.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "demo/child_process.h"
#include "demo/loopback.h"
#include "leasehold/status.h"

namespace leasehold::demo {

class PrivateLeaseholdServer {
 public:
  // `leasehold_binary`: the path of the leasehold executable; `env` is added
  // to the server's environment (e.g. a clock fault, common/clock_fault.h).
  static Result<std::unique_ptr<PrivateLeaseholdServer>> start(
      const std::string& leasehold_binary, const std::vector<std::pair<std::string, std::string>>& env = {});
  ~PrivateLeaseholdServer();  // SIGTERM, then SIGKILL after 5 s; deletes the data
  PrivateLeaseholdServer(const PrivateLeaseholdServer&) = delete;
  PrivateLeaseholdServer& operator=(const PrivateLeaseholdServer&) = delete;

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& data_dir() const { return data_dir_; }

 private:
  PrivateLeaseholdServer() = default;
  ScratchDir dir_;
  std::string data_dir_;
  ChildProcess process_;
  std::uint16_t port_ = 0;
};

class PrivatePostgres {
 public:
  // True if `bin_dir` holds initdb, pg_ctl and postgres.
  static bool installed(const std::string& bin_dir);
  static Result<std::unique_ptr<PrivatePostgres>> start(const std::string& bin_dir);
  ~PrivatePostgres();  // pg_ctl stop (fast, then immediate); deletes the cluster
  PrivatePostgres(const PrivatePostgres&) = delete;
  PrivatePostgres& operator=(const PrivatePostgres&) = delete;

  // "host=127.0.0.1 port=... user=postgres dbname=postgres ..."
  std::string conninfo() const;
  std::uint16_t port() const { return port_; }
  const std::string& cluster_dir() const { return dir_.path(); }

 private:
  PrivatePostgres() = default;
  Result<int> pg_tool(const std::vector<std::string>& args, const std::string& log,
                      std::chrono::milliseconds timeout) const;

  std::string bin_dir_;
  ScratchDir dir_;
  std::optional<std::pair<uid_t, gid_t>> run_as_;
  std::uint16_t port_ = 0;
  bool running_ = false;
};

}  // namespace leasehold::demo
