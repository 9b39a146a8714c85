// `leasehold server`: runs the lock service until SIGINT/SIGTERM: embedded
// mode (one process, RocksDB log in --data-dir) or, with --etcd, one member
// of a replicated cluster (log in etcd; docs/cluster.md). Exit codes
// (common/exit_codes.h): 64 for a bad flag, config file or impossible
// limits; 69 when the address or the data dir is taken or etcd does not
// answer; 74 for a data dir that cannot be used or holds a damaged log.
// Each start error is printed once, on stderr. See docs/server.md.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string_view>

#include "common/exit_codes.h"
#include "common/unsafe_test_faults.h"
#include "server/base/config.h"
#include "server/base/wire_ceilings.h"
#include "slots/shard_map.h"
#include "server/fd_table_reserve.h"
#include "server/memory_retention.h"
#include "server/server.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

// A duration flag that becomes a steady_clock deadline: at most the longest
// duration a request can carry, so now + it never overflows.
const CLI::Range kWireDurationRange(std::uint64_t{0}, server::kMaxWireDurationMs);

struct ServerFlags {
  server::ServerConfig config;
  std::string listen = "127.0.0.1:7379";
  std::uint64_t idle_timeout_ms = 30'000;
  std::uint64_t etcd_timeout_ms = 2000;
  std::uint64_t commit_linger_us = 200;
  std::uint64_t enqueue_defer_us = 5000;
  std::uint64_t apply_step_us = 2000;
  std::uint64_t snapshot_step_us = 2000;
  std::uint64_t read_budget_us = 2000;
  std::uint64_t append_timeout_ms = 3000;
  std::uint64_t etcd_startup_wait_ms = 10'000;
  std::uint64_t long_hold_ms = 60'000;
  std::string config_file;
  std::string durability = "fsync";
  bool snapshot_in_child = false;
  std::string protected_mode = "yes";
  std::string http_auth = "users";
  std::string tls_auth_clients = "yes";
  std::vector<std::string> unsafe_test_faults;  // hidden; common/unsafe_test_faults.h
  std::vector<std::string> max_hold;            // --max-hold PREFIX=DURATION, repeatable
  // Scale-out (docs/scale-out.md).
  std::uint32_t shard_id = 0;
  std::string shard_slots;
  std::vector<std::string> shard_peers;         // ID@HOST:PORT=SLOTS, repeatable
};

// --shard-id, --shard-slots and --shard-peers: the map of the shards, this
// one at its --listen address. Empty when none is given. Refused (a message
// naming the overlapping or missing slots) unless the shards' slots are
// exactly 0-16383, each slot once.
Result<slots::ShardMap> shard_map_from_flags(const ServerFlags& flags, const server::ServerConfig& cfg) {
  if (flags.shard_id == 0 && flags.shard_slots.empty() && flags.shard_peers.empty()) return slots::ShardMap();
  if (flags.shard_id == 0 || flags.shard_slots.empty()) {
    return Status(ErrorCode::kInvalidArgument, "a shard needs both --shard-id (1.." +
                                                   std::to_string(slots::kMaxShardId) +
                                                   ") and --shard-slots (with --shard-peers for the others)");
  }
  slots::ShardAddress self;
  self.id = flags.shard_id;
  self.host = cfg.listen_host;
  self.port = cfg.listen_port;
  if (self.port == 0) {
    return Status(ErrorCode::kInvalidArgument, "a shard needs a fixed --listen port: its peers redirect to it");
  }
  auto own = slots::SlotSet::parse(flags.shard_slots);
  if (!own) return Status(ErrorCode::kInvalidArgument, "--shard-slots: " + own.status().message());
  self.slots = std::move(own).value();
  std::vector<slots::ShardAddress> peers;
  for (const std::string& text : flags.shard_peers) {
    auto peer = slots::parse_shard_peer(text);
    if (!peer) return Status(ErrorCode::kInvalidArgument, "--shard-peers: " + peer.status().message());
    peers.push_back(std::move(peer).value());
  }
  auto map = slots::ShardMap::build(std::move(self), std::move(peers));
  if (!map) return Status(ErrorCode::kInvalidArgument, "the shard map: " + map.status().message());
  return map;
}

// --unsafe-test-fault NAME (repeatable, hidden): test-only switches that
// break a safety property on purpose (docs/faults.md). Refused unless the
// environment has LEASEHOLD_UNSAFE_TEST_FAULTS=1; each one is logged loudly.
bool enable_unsafe_test_faults(const std::vector<std::string>& names) {
  if (names.empty()) return true;
  const char* allow = std::getenv("LEASEHOLD_UNSAFE_TEST_FAULTS");
  if (allow == nullptr || std::string_view(allow) != "1") {
    std::cerr << "leasehold server: --unsafe-test-fault breaks the service's safety on purpose and is for the "
                 "fault-injection tests only; it is refused unless LEASEHOLD_UNSAFE_TEST_FAULTS=1 is set\n";
    return false;
  }
  for (const std::string& name : names) {
    if (Status s = unsafe::enable_test_fault(name); !s) {
      std::cerr << "leasehold server: --unsafe-test-fault: " << s.message() << "\n";
      return false;
    }
    spdlog::critical("UNSAFE TEST FAULT '{}' is ON: this server breaks its safety promises on purpose "
                     "(docs/faults.md); never use it for anything but the fault-injection tests",
                     name);
  }
  return true;
}

// Applies `--config FILE` (TOML/INI, keys = flag names without dashes, e.g.
// `data-dir = "/x"`): a key sets its flag unless the command line set it.
// Returns false (after printing why) on an unreadable file or unknown key.
bool apply_config_file(CLI::App& cmd, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "leasehold server: cannot read config file " << path << "\n";
    return false;
  }
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_config(in);
  } catch (const CLI::Error& e) {
    std::cerr << "leasehold server: bad config file " << path << ": " << e.what() << "\n";
    return false;
  }
  for (const auto& item : items) {
    if (item.name == "++" || item.name == "--") continue;  // section markers
    std::string name = item.name;
    std::replace(name.begin(), name.end(), '_', '-');
    CLI::Option* opt = cmd.get_option_no_throw("--" + name);
    if (opt == nullptr || name == "config" || name == "help") {
      std::cerr << "leasehold server: unknown key '" << item.name << "' in " << path << "\n";
      return false;
    }
    if (opt->count() > 0) continue;  // the command line wins
    try {
      opt->add_result(item.inputs);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      std::cerr << "leasehold server: bad value for '" << item.name << "' in " << path << ": " << e.what()
                << "\n";
      return false;
    }
  }
  return true;
}

// The exit code of a failed start, by what failed (common/exit_codes.h).
int start_failure_exit_code(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kLimitExceeded: return exit_code::kUsage;  // e.g. a bad users file, protected mode
    case ErrorCode::kUnavailable:
    case ErrorCode::kUnreachable:
    case ErrorCode::kTimedOut:
    case ErrorCode::kConflict: return exit_code::kUnavailable;  // address or data dir taken, etcd down
    case ErrorCode::kIoError:
    case ErrorCode::kCorruption: return exit_code::kIoError;  // data dir unusable or damaged
    default: return exit_code::kInternal;
  }
}

void run_server(ServerFlags& flags) {
  server::ServerConfig& cfg = flags.config;
  auto logger = spdlog::stderr_logger_mt("leasehold");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::set_default_logger(logger);
  const auto level = spdlog::level::from_str(cfg.log_level);
  if (level == spdlog::level::off && cfg.log_level != "off") {
    std::cerr << "leasehold server: bad --log-level '" << cfg.log_level
              << "' (trace, debug, info, warn, error, critical, off)\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  spdlog::set_level(level);
  if (!enable_unsafe_test_faults(flags.unsafe_test_faults)) {
    set_exit_code(exit_code::kUsage);
    return;
  }
  if (Status s = server::parse_listen(flags.listen, cfg.listen_host, cfg.listen_port); !s) {
    std::cerr << "leasehold server: " << s.message() << "\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  cfg.node.acknowledge_before_durable = flags.durability == "lease";
  cfg.node.snapshot_in_child = flags.snapshot_in_child;
  if (cfg.node.acknowledge_before_durable && cfg.cluster.enabled()) {
    std::cerr << "leasehold server: --durability lease is for embedded mode only: cluster mode makes every "
                 "command durable in etcd before it is acknowledged (drop --durability or --etcd)\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  cfg.protected_mode = flags.protected_mode == "yes";
  cfg.http_auth = flags.http_auth == "none" ? server::HttpAuth::kNone : server::HttpAuth::kUsers;
  if (cfg.http_tls && cfg.http_listen.empty()) {
    std::cerr << "leasehold server: --http-tls needs --http-listen\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  if (auto auth = server::parse_tls_client_auth(flags.tls_auth_clients); auth) {
    cfg.tls.auth_clients = *auth;
  }
  cfg.idle_timeout = std::chrono::milliseconds(flags.idle_timeout_ms);
  cfg.read_budget = std::chrono::microseconds(flags.read_budget_us);
  cfg.cluster.etcd_timeout = std::chrono::milliseconds(flags.etcd_timeout_ms);
  cfg.node.commit_linger = std::chrono::microseconds(flags.commit_linger_us);
  cfg.node.enqueue_defer = std::chrono::microseconds(flags.enqueue_defer_us);
  cfg.node.apply_step = std::chrono::microseconds(flags.apply_step_us);
  cfg.node.snapshot_step = std::chrono::microseconds(flags.snapshot_step_us);
  cfg.cluster.append_timeout = std::chrono::milliseconds(flags.append_timeout_ms);
  cfg.cluster.startup_wait = std::chrono::milliseconds(flags.etcd_startup_wait_ms);
  cfg.long_hold = std::chrono::milliseconds(flags.long_hold_ms);
  for (const std::string& rule : flags.max_hold) {
    auto parsed = server::parse_max_hold(rule);
    if (!parsed) {
      std::cerr << "leasehold server: " << parsed.status().message() << "\n";
      set_exit_code(exit_code::kUsage);
      return;
    }
    cfg.max_hold.push_back(std::move(parsed).value());
  }
  if (!cfg.http_listen.empty()) {
    std::string host;
    std::uint16_t port = 0;
    if (Status s = server::parse_listen(cfg.http_listen, host, port); !s) {
      std::cerr << "leasehold server: --http-listen: " << s.message() << "\n";
      set_exit_code(exit_code::kUsage);
      return;
    }
  }
  if (auto map = shard_map_from_flags(flags, cfg); !map) {
    std::cerr << "leasehold server: " << map.status().message() << "\n";
    set_exit_code(exit_code::kUsage);
    return;
  } else {
    cfg.shards = std::move(map).value();
  }
  const cluster::ClusterOptions& cl = cfg.cluster;
  if (!cl.enabled() && !(cl.etcd_ca_file + cl.etcd_cert_file + cl.etcd_key_file + cl.etcd_user +
                         cl.etcd_password_file + cl.advertise_tls).empty()) {
    std::cerr << "leasehold server: --etcd-ca, --etcd-cert, --etcd-key, --etcd-user, --etcd-password-file and "
                 "--advertise-tls are for cluster mode (--etcd)\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  if (cfg.cluster.enabled() && cfg.cluster.advertise.empty()) cfg.cluster.advertise = flags.listen;
  if (cfg.cluster.enabled() && cfg.cluster.advertise_tls.empty()) cfg.cluster.advertise_tls = cfg.tls.listen;
  if (Status s = server::validate_config(cfg); !s) {
    std::cerr << "leasehold server: " << s.message() << "\n";
    set_exit_code(exit_code::kUsage);
    return;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Before any thread starts: freed buffers are reused, not faulted in again.
  if (!server::retain_freed_memory()) {
    spdlog::info("malloc refused to keep freed memory (not glibc's malloc?): large buffers are faulted in "
                 "again after each free (server/memory_retention.h)");
  }
  // Also before any thread starts: accepts never grow the descriptor table.
  const std::size_t fds_needed = cfg.max_clients + server::kOwnDescriptors;
  if (auto fds = server::reserve_fd_table(fds_needed); !fds) {
    spdlog::warn("cannot reserve the descriptor table error=\"{}\" (accepts grow it, with a wait each time; "
                 "server/fd_table_reserve.h)", fds.status().to_string());
  } else if (fds->limit < fds_needed) {
    spdlog::warn("--max-clients {} needs {} file descriptors, but RLIMIT_NOFILE allows {}: connections past "
                 "about {} clients will fail (raise the hard limit: ulimit -Hn, or LimitNOFILE= in systemd)",
                 cfg.max_clients, fds_needed, fds->limit,
                 fds->limit > server::kOwnDescriptors ? fds->limit - server::kOwnDescriptors : 0);
  }
  server::Server srv(cfg);
  if (Status s = srv.start(); !s) {
    // Once: the log goes to stderr too, so this line is the only report.
    std::cerr << "leasehold server: cannot start: " << s.message() << "\n";
    set_exit_code(start_failure_exit_code(s));
    return;
  }
  Status s = srv.run();
  if (!s) {
    // The start's Reopen could not be written: the server stopped without
    // serving (server/server.h, run()).
    std::cerr << "leasehold server: stopped: " << s.message() << "\n";
    set_exit_code(start_failure_exit_code(s));
    return;
  }
  set_exit_code(exit_code::kOk);
}

void register_server(CLI::App& app) {
  auto flags = std::make_shared<ServerFlags>();
  server::ServerConfig& c = flags->config;
  core::Limits& l = c.node.limits;
  auto* cmd = app.add_subcommand("server", "Run the leasehold lock server (embedded, or a cluster member with --etcd)");
  cmd->add_option("--config", flags->config_file,
                  "Read these options from a TOML/INI file (keys = flag names without dashes; flags win)");
  cmd->add_option("--listen", flags->listen, "Client address host:port")->capture_default_str();
  cmd->add_option("--data-dir", c.data_dir, "Directory of the durable log and snapshots")->capture_default_str();
  cmd->add_option("--log-level", c.log_level, "trace, debug, info, warn, error, critical, off")
      ->capture_default_str();

  auto* sec = "Security (docs/security.md)";
  cmd->add_option("--users-file", c.users_file, "Users, password hashes, key patterns and categories; re-read on SIGHUP / ACL LOAD")->group(sec);
  cmd->add_option("--requirepass-file", c.requirepass_file, "File holding the default user's password (passwords are never taken on the command line)")->group(sec);
  cmd->add_option("--protected-mode", flags->protected_mode, "yes: refuse a non-loopback --listen while the default user needs no password")->group(sec)->check(CLI::IsMember({"yes", "no"}))->capture_default_str();

  cmd->add_option("--tls-listen", c.tls.listen, "TLS client address host:port (beside --listen)")->group(sec);
  cmd->add_option("--tls-cert-file", c.tls.cert_file, "PEM certificate (chain) of the server; re-read on SIGHUP")->group(sec);
  cmd->add_option("--tls-key-file", c.tls.key_file, "PEM private key of the server; re-read on SIGHUP")->group(sec);
  cmd->add_option("--tls-ca-cert-file", c.tls.ca_cert_file, "PEM CA certificates that sign client certificates")->group(sec);
  cmd->add_option("--tls-auth-clients", flags->tls_auth_clients, "Client certificates: yes (required), optional, no; a verified certificate's CN names the user")->group(sec)->check(CLI::IsMember({"yes", "no", "optional"}))->capture_default_str();

  auto* lim = "State limits";
  cmd->add_option("--max-name-bytes", l.max_name_bytes, "Longest lock name / key")->group(lim)->capture_default_str();
  cmd->add_option("--max-owner-bytes", l.max_owner_bytes, "Longest session owner label")->group(lim)->capture_default_str();
  cmd->add_option("--max-value-bytes", l.max_value_bytes, "Largest fenced / compat value")->group(lim)->capture_default_str();
  cmd->add_option("--max-sessions", l.max_sessions, "Live sessions")->group(lim)->capture_default_str();
  cmd->add_option("--max-locks", l.max_locks, "Locks with holders or waiters")->group(lim)->capture_default_str();
  cmd->add_option("--max-fence-keys", l.max_fence_keys, "Fenced keys")->group(lim)->capture_default_str();
  cmd->add_option("--max-waiters-per-lock", l.max_waiters_per_lock, "Queued waiters per lock")->group(lim)->capture_default_str();
  cmd->add_option("--max-holders-per-lock", l.max_holders_per_lock, "Shared holders / semaphore permits")->group(lim)->capture_default_str();
  cmd->add_option("--min-ttl-ms", l.min_ttl_ms, "Shortest session TTL")->group(lim)->capture_default_str();
  cmd->add_option("--max-ttl-ms", l.max_ttl_ms, "Longest session TTL")->group(lim)->capture_default_str();
  cmd->add_option("--max-wait-ms", l.max_wait_ms, "Longest LOCK.ACQUIRE WAIT")->group(lim)->capture_default_str();
  cmd->add_option("--max-delay-ms", l.max_delay_ms, "Longest lock-delay")->group(lim)->capture_default_str();
  cmd->add_option("--idempotence-window", l.idempotence_window, "Replies remembered per session for SEQ retries")->group(lim)->capture_default_str();

  auto* proto = "Protocol and client limits";
  cmd->add_option("--proto-max-bulk-len", c.protocol.max_bulk_bytes, "Largest bulk string in a request")->group(proto)->capture_default_str();
  cmd->add_option("--proto-max-array-len", c.protocol.max_array_len, "Most arguments in a request")->group(proto)->capture_default_str();
  cmd->add_option("--proto-max-inline-len", c.protocol.max_inline_bytes, "Longest inline command line")->group(proto)->capture_default_str();
  cmd->add_option("--proto-max-request-bytes", c.protocol.max_frame_bytes, "Largest request (payload + per-argument overhead)")->group(proto)->capture_default_str();
  cmd->add_option("--max-clients", c.max_clients, "Connected clients; more are refused")->group(proto)->capture_default_str();
  cmd->add_option("--max-output-bytes", c.max_output_bytes, "Unsent reply bytes per client before it is disconnected")->group(proto)->capture_default_str();
  cmd->add_option("--max-pipeline", c.max_pipeline, "Unanswered requests per client before reading pauses")->group(proto)->capture_default_str();
  cmd->add_option("--max-pipeline-bytes", c.max_pipeline_bytes, "Argument bytes of unanswered requests per client before reading pauses")->group(proto)->capture_default_str();
  cmd->add_option("--idle-timeout-ms", flags->idle_timeout_ms, "Close clients that send no complete command this long after connecting, or whose partial command started this long ago; 0 = never")->group(proto)->capture_default_str()->check(kWireDurationRange);
  cmd->add_option("--read-budget-us", flags->read_budget_us, "Loop time per turn for parsing and starting requests; clients read after it wait for a later turn, in arrival order (0 = no limit)")->group(proto)->capture_default_str()->check(CLI::Range(0, 1'000'000));

  auto* node = "Log, batching and snapshots";
  cmd->add_option("--max-batch-commands", c.node.max_batch_commands, "Commands per group commit")->group(node)->capture_default_str();
  cmd->add_option("--max-batch-bytes", c.node.max_batch_bytes, "Bytes per group commit")->group(node)->capture_default_str();
  cmd->add_option("--commit-linger-us", flags->commit_linger_us, "After a commit, wait up to this long for the clients just answered before starting the next one (0 = off)")->group(node)->capture_default_str()->check(CLI::Range(0, 100'000));
  cmd->add_option("--enqueue-defer-us", flags->enqueue_defer_us, "A blocking acquire that must queue is written with the next commit (usually the release that frees the lock) or after this long, instead of a commit of its own (0 = off)")->group(node)->capture_default_str()->check(CLI::Range(0, 1'000'000));
  cmd->add_option("--apply-step-us", flags->apply_step_us, "A committed batch is applied and answered in steps of about this much loop time, serving other clients between steps (0 = a batch at once)")->group(node)->capture_default_str()->check(CLI::Range(0, 1'000'000));
  cmd->add_option("--snapshot-step-us", flags->snapshot_step_us, "A snapshot encoded on the loop thread is encoded in steps of about this much loop time, serving clients between steps (0 = 1,000 sessions per step)")->group(node)->capture_default_str()->check(CLI::Range(0, 1'000'000));
  cmd->add_option("--max-pending-proposals", c.node.max_pending_proposals, "Queued + in-flight writes before refusing")->group(node)->capture_default_str();
  cmd->add_option("--snapshot-every-commands", c.node.snapshot_every_commands, "Snapshot after this many commands (0 = off)")->group(node)->capture_default_str();
  cmd->add_option("--snapshot-every-bytes", c.node.snapshot_every_bytes, "Snapshot after this many log bytes (0 = off)")->group(node)->capture_default_str();
  cmd->add_flag("--snapshot-in-child", flags->snapshot_in_child, "Encode snapshots in a forked child instead of on the event loop (slower where copy-on-write faults are slow, e.g. in some VMs: docs/log-and-node.md)")->group(node);

  cmd->add_option("--durability", flags->durability,
                  "fsync: every command is durable before it is answered; lease: answered at once, written behind "
                  "(fenced values stay durable; after a crash every session expires and no lock is granted for the "
                  "longest TTL): docs/server.md")
      ->group(node)
      ->capture_default_str()
      ->check(CLI::IsMember({"fsync", "lease"}));

  auto* rec = "Recovery of a damaged data dir (docs/log-and-node.md)";
  cmd->add_flag("--recover-lost-log", c.recover_lost_log, "Start although the revision record shows that the log lost data: every session is expired, revisions restart above the record, no lock is granted for the longest TTL in use")->group(rec);
  cmd->add_option("--revision-floor", c.revision_floor, "With --recover-lost-log when the revision record itself is lost: revisions restart above this (at least the highest fencing token any resource has seen)")->group(rec);
  cmd->add_option("--revision-block", c.revision_block, "Revisions reserved per write of the revision record")->group(rec)->capture_default_str()->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  auto* ops = "Operations: HTTP endpoints, metrics, audit history (docs/operations.md)";
  cmd->add_option("--http-listen", c.http_listen, "host:port of the HTTP listener (/metrics, /healthz, /readyz, /api, dashboard at /); empty = off")->group(ops);
  cmd->add_option("--http-auth", flags->http_auth, "users: /metrics, /api and the dashboard need a user with +@monitor (Basic or bearer token); none: open to anyone who reaches the port (warned at start)")->group(ops)->check(CLI::IsMember({"users", "none"}))->capture_default_str();
  cmd->add_flag("--http-tls", c.http_tls, "Serve HTTPS on --http-listen with --tls-cert-file / --tls-key-file (re-read on SIGHUP)")->group(ops);
  cmd->add_option("--long-hold-ms", flags->long_hold_ms, "Holds older than this count as long-held (metric leasehold_long_held_locks, dashboard)")->group(ops)->capture_default_str()->check(CLI::Range(std::uint64_t{1}, std::uint64_t{365ULL * 86'400'000}));
  cmd->add_option("--max-hold", flags->max_hold, "PREFIX=DURATION (repeatable): locks whose name starts with PREFIX are held at most DURATION (ms, s, m, h); also their lease when LOCK.ACQUIRE gives no LEASE. The longest prefix wins")->group(ops);
  cmd->add_option("--history-max-entries", c.history_max_entries, "Audit history records kept (in <data-dir>/history.log)")->group(ops)->capture_default_str()->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}));

  auto* sh = "Scale-out: this server as one shard of the hash slots (docs/scale-out.md)";
  cmd->add_option("--shard-id", flags->shard_id, "This shard's id (1..1023), stable for its data dir: its session ids carry it")->group(sh)->check(CLI::Range(std::uint32_t{1}, std::uint32_t{slots::kMaxShardId}));
  cmd->add_option("--shard-slots", flags->shard_slots, "The hash slots this shard owns, e.g. 0-5460 or 0-100,200-300")->group(sh);
  cmd->add_option("--shard-peers", flags->shard_peers, "The other shards, each ID@HOST:PORT=SLOTS (repeatable, or several after one flag), e.g. 2@127.0.0.1:7380=8192-16383; with --shard-slots every slot 0-16383 exactly once")->group(sh);
  auto* ha = "Replicated mode on etcd (docs/cluster.md)";
  cmd->add_option("--etcd", c.cluster.etcd_endpoints, "etcd client URLs, comma-separated; enables cluster mode")->group(ha);
  cmd->add_option("--cluster", c.cluster.cluster_name, "Cluster name: keys live under /leasehold/<name>")->group(ha)->capture_default_str();
  cmd->add_option("--advertise", c.cluster.advertise, "host:port clients reach this node at (default: --listen)")->group(ha);
  cmd->add_option("--advertise-tls", c.cluster.advertise_tls, "host:port TLS clients reach this node at (default: --tls-listen); a standby redirects TLS clients there")->group(ha);
  cmd->add_option("--etcd-ca", c.cluster.etcd_ca_file, "PEM CA certificates that sign etcd's certificate (https:// endpoints; default: the system's)")->group(ha);
  cmd->add_option("--etcd-cert", c.cluster.etcd_cert_file, "PEM client certificate for etcd (--client-cert-auth)")->group(ha);
  cmd->add_option("--etcd-key", c.cluster.etcd_key_file, "PEM private key of --etcd-cert")->group(ha);
  cmd->add_option("--etcd-user", c.cluster.etcd_user, "etcd user (its role needs readwrite on /leasehold/<cluster>/); needs --etcd-password-file")->group(ha);
  cmd->add_option("--etcd-password-file", c.cluster.etcd_password_file, "File holding the etcd user's password (one line; not world-readable); re-read on SIGHUP")->group(ha);
  cmd->add_option("--etcd-lease-ttl", c.cluster.lease_ttl_s, "Seconds: TTL of the election lease; a dead primary is replaced after about this long")->group(ha)->capture_default_str();
  cmd->add_option("--etcd-timeout-ms", flags->etcd_timeout_ms, "Deadline of each etcd call")->group(ha)->capture_default_str()->check(kWireDurationRange);
  cmd->add_option("--etcd-startup-wait-ms", flags->etcd_startup_wait_ms, "At start, retry this long while etcd is unreachable before exiting; 0 = wait until etcd answers")->group(ha)->capture_default_str()->check(CLI::Range(std::uint64_t{0}, std::uint64_t{86'400'000}));
  cmd->add_option("--append-timeout-ms", flags->append_timeout_ms, "How long one log append retries while etcd is unreachable before writes fail with -UNAVAILABLE")->group(ha)->capture_default_str()->check(kWireDurationRange);

  // Hidden (no group): test-only switches, see enable_unsafe_test_faults().
  cmd->add_option("--unsafe-test-fault", flags->unsafe_test_faults, "")->group("");

  cmd->callback([flags, cmd] {
    if (!flags->config_file.empty() && !apply_config_file(*cmd, flags->config_file)) {
      set_exit_code(exit_code::kUsage);
      return;
    }
    run_server(*flags);
  });
}

const bool server_registered = add_subcommand("server", &register_server);

}  // namespace
}  // namespace leasehold::tools
