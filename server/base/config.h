// server/base/config.h: everything `leasehold server` can be told (flags / config file).
//
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_member.h"
#include "node/node.h"
#include "resp/parser.h"
#include "server/base/max_hold.h"
#include "server/base/tls_options.h"

namespace leasehold::server {

// Who may read the HTTP listener's views (/metrics, /api, the dashboard;
// docs/operations.md, HTTP access): the users of the users file (Basic or a
// bearer token, ACL category monitor), or, on purpose, anyone.
enum class HttpAuth { kUsers, kNone };

struct ServerConfig {
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 7379;  // 0: the kernel picks (see Server::port())
  std::string data_dir = "./data";
  std::string log_level = "info";    // trace, debug, info, warn, error, critical, off

  node::NodeOptions node;            // core limits, group commit, snapshot cadence
  // Replicated mode on etcd (docs/cluster.md) when cluster.etcd_endpoints is
  // set; the log is then in etcd and data_dir only holds local snapshots.
  cluster::ClusterOptions cluster;
  resp::ParserLimits protocol;       // max bulk / array / inline / depth / frame

  std::size_t max_clients = 10'000;
  // A client whose unsent replies (and pushes) exceed this is disconnected.
  std::size_t max_output_bytes = 32u << 20;
  // Requests parsed but not yet answered per connection; beyond it the server
  // stops reading that socket until replies drain (TCP back-pressure).
  std::size_t max_pipeline = 1024;
  // Argument bytes of those requests per connection; reading pauses the same
  // way once they reach it (one request is always accepted, so a connection
  // holds at most this plus --proto-max-request-bytes).
  std::size_t max_pipeline_bytes = 16u << 20;
  // A connection that has not completed a command within this long after
  // connecting, or whose partial request started this long ago, is closed.
  // 0 disables.
  std::chrono::milliseconds idle_timeout{30'000};
  // Loop time per turn for serving reads (parsing, starting requests and
  // writing the replies ready at once; applying commits has its own budget,
  // NodeOptions::apply_step): connections read after it wait for a later
  // turn, in arrival order (server/net/read_budget.h).
  // 0 = no limit.
  std::chrono::microseconds read_budget{2'000};

  // The durable revision record (embedded mode; node/revision_guard.h).
  bool recover_lost_log = false;       // --recover-lost-log
  std::uint64_t revision_floor = 0;    // --revision-floor
  std::uint64_t revision_block = 1u << 20;
  // Operations (docs/operations.md).
  std::string http_listen;                     // "host:port" of the HTTP listener; empty = off
  HttpAuth http_auth = HttpAuth::kUsers;       // --http-auth users|none
  bool http_tls = false;                       // --http-tls: HTTPS with the --tls-cert/key-file
  std::chrono::milliseconds long_hold{60'000}; // holds older than this count as long-held
  std::size_t history_max_entries = 100'000;   // audit history records kept
  // --max-hold PREFIX=DURATION: per lock-name prefix, the default lease and
  // the ceiling of LEASE / LOCK.EXTEND (server/base/max_hold.h).
  std::vector<MaxHold> max_hold;
  // Security (docs/security.md). Users come from users_file; requirepass_file
  // holds the default user's password. Both are re-read on SIGHUP / ACL LOAD.
  std::string users_file;
  std::string requirepass_file;
  // Refuse to listen on a non-loopback address while the default user needs
  // no password.
  bool protected_mode = true;
  // A failed AUTH is answered after auth_fail_delay << (failures in a row - 1),
  // at most auth_fail_delay_max (a loop timer: the loop never blocks).
  std::chrono::milliseconds auth_fail_delay{100};
  std::chrono::milliseconds auth_fail_delay_max{2'000};
  // TLS listener beside the plain one (tls.listen set); certificates are
  // re-read on SIGHUP.
  TlsOptions tls;
};

// Refuses limits that could not serve: ones that would make every command
// (or every command of a kind) fail, e.g. --min-ttl-ms above --max-ttl-ms,
// --max-name-bytes 0, a batch too small for the largest command the limits
// allow. kInvalidArgument naming the flags (one problem per message).
Status validate_config(const ServerConfig& config);

// True for 127.0.0.0/8 and ::1.
bool is_loopback_host(const std::string& host);

// Parses "host:port" (IPv4 or [IPv6]:port). kInvalidArgument naming the problem.
Status parse_listen(const std::string& text, std::string& host, std::uint16_t& port);

}  // namespace leasehold::server
