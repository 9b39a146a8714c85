// testkit/etcd_cluster.h: a real etcd cluster (1 or 3 or N members) on
// free 127.0.0.1 ports for tests, reusable by any layer's tests
// (in the CMake target leasehold_testkit).
//
// Each member is /usr/bin/etcd (override with $LEASEHOLD_ETCD_BIN) with its
// own data dir under a private temp dir, client and peer URLs on loopback,
// fast Raft timing (heartbeat 100 ms, election timeout 1000 ms) and real
// fsync. Output goes to <tempdir>/<name>.log (log_path()).
//
// Members die with the test process even if it crashes (Subprocess); the
// destructor kills and reaps every member and removes the data.
//
// TLS and auth (EtcdClusterOptions::tls, enable_auth()): client URLs are
// https:// with client certificates required (--client-cert-auth); health
// is then read on a plain metrics URL; etcdctl() runs the real etcdctl
// against the cluster; enable_auth() creates users and roles and turns
// etcd authentication on. leader() needs a plain cluster.
//
// Errors: start()/restart() return kIoError when a process cannot be
// spawned, kUnavailable when the cluster is not healthy in time (message
// has the tail of the member's log).
// Thread-safety: one owner thread; not safe for concurrent use.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "leasehold/status.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {

// Files of a TLS etcd (e.g. made by tests/server/tls_certs.h).
struct EtcdTlsFiles {
  std::string cert_file;         // etcd's certificate (SAN IP:127.0.0.1)
  std::string key_file;
  std::string ca_file;           // CA of etcd's and the clients' certificates
  std::string client_cert_file;  // a client certificate etcdctl() uses
  std::string client_key_file;
};

// A user and a role of the same name, readwrite on keys starting with
// `prefix` ("" = a role without any permission).
struct EtcdUser {
  std::string name;
  std::string password;
  std::string prefix;
};

struct EtcdClusterOptions {
  int members = 1;
  std::chrono::milliseconds heartbeat_interval{100};
  std::chrono::milliseconds election_timeout{1000};
  std::chrono::milliseconds start_timeout{30000};  // until every member is healthy
  std::optional<EtcdTlsFiles> tls = std::nullopt;  // set: https:// client URLs
  // The port the other members dial to reach member i (its advertised peer
  // URL, in --initial-advertise-peer-urls and --initial-cluster), given the
  // port it listens on for peers: e.g. a fault proxy's in front of it.
  // Called once per member, in order, in start() before any member runs
  // (again for a new attempt, see start()); unset: the member's own peer
  // port. 0 fails start() (kIoError).
  std::function<std::uint16_t(int member, std::uint16_t peer_port)> peer_route = {};
  // Where member i keeps its data (e.g. on a mount of the torture suite's
  // fault filesystem), given the default: a directory in the cluster's temp
  // dir. Called once per member, in order, in start() before any member
  // runs (again for a new attempt, after the directory's contents from the
  // failed one were removed); unset: the default. "" fails start() (kIoError).
  std::function<std::string(int member, const std::string& default_dir)> data_dir_route = {};
};

class EtcdCluster {
 public:
  // Ports are picked free and then bound by etcd, so another process (a
  // test running beside this one, or a proxy of peer_route) can take one in
  // between: when a member exits with "address already in use", start()
  // kills the attempt and starts again with new ports, up to 3 attempts.
  static Result<std::unique_ptr<EtcdCluster>> start(const EtcdClusterOptions& options = {});
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  // "http://127.0.0.1:<p0>,http://127.0.0.1:<p1>,..." (all members)
  std::string endpoints() const;
  // "http://127.0.0.1:<port>" of member i
  std::string endpoint(int i) const;
  std::uint16_t client_port(int i) const;
  std::string log_path(int i) const;
  // The last 2000 bytes of member i's log (for a failure message).
  std::string log_tail(int i) const;
  const std::string& data_root() const { return dir_.path(); }

  pid_t pid(int i) const;  // of the member's current process
  bool running(int i);
  void kill(int i);    // SIGKILL and reap (a crash: no clean shutdown)
  void pause(int i);   // SIGSTOP (a frozen process: keeps its sockets)
  void resume(int i);  // SIGCONT
  // Starts member i again on the same ports and data dir (killing it first
  // if it runs) and waits until its client port accepts connections.
  // Does not wait for health: with a majority down it cannot be healthy.
  Status restart(int i);

  // True once GET /health on member i says {"health":"true"} (it has a
  // leader and can serve a quorum read), false after scaled(timeout)
  // (testkit/eventually.h) or once the member exited.
  bool healthy(int i, std::chrono::milliseconds timeout);
  // Every running member healthy within scaled(timeout).
  Status wait_healthy(std::chrono::milliseconds timeout);
  // Index of the member that is the Raft leader (asked through etcd's
  // maintenance Status API: the member whose own status names itself as
  // leader), polling until scaled(`timeout`); -1 if none. Member `skip` is
  // not asked: pass a paused member (each paused member asked costs a 1 s
  // socket timeout).
  int leader(std::chrono::milliseconds timeout, int skip = -1);

  // Runs `etcdctl <args>` (API v3, the TLS files, and `--user
  // user_password` when given) against `members` (empty: every member): its
  // output, or kInternal with it when etcdctl fails (bounded at 60 s).
  // etcdctl sends a request to any one of its endpoints, so a test that
  // expects an answer while some member has no leader names the others.
  Result<std::string> etcdctl(const std::vector<std::string>& args, const std::string& user_password = "",
                              const std::vector<int>& members = {});
  // Adds user "root" (password `root_password`, role root) and `users`,
  // then `etcdctl auth enable`.
  Status enable_auth(const std::string& root_password, const std::vector<EtcdUser>& users);

 private:
  // One attempt of start(); the data dirs it used go to `data_dirs`.
  static Result<std::unique_ptr<EtcdCluster>> start_once(const EtcdClusterOptions& options,
                                                         std::vector<std::string>& data_dirs);
  struct Member {
    std::string name;
    std::uint16_t client_port = 0;
    std::uint16_t peer_port = 0;
    std::uint16_t advertised_peer_port = 0;  // peer_port, or options.peer_route's
    std::uint16_t metrics_port = 0;  // TLS clusters: plain /health
    std::string data_dir;            // the default, or options.data_dir_route's
    Subprocess process;
  };
  explicit EtcdCluster(const EtcdClusterOptions& options);
  std::vector<std::string> argv(int i) const;
  Status spawn(int i);

  EtcdClusterOptions options_;
  TempDir dir_;  // declared first: removed after the members are dead
  std::string token_;
  std::vector<Member> members_;
};

}  // namespace leasehold::testing
