// leasehold_loadbench: drives leasehold, Redis, ZooKeeper and etcd (its own
// mutex recipe) servers that are already running with the same lock
// workloads in one run and prints a side-by-side table (see docs/bench.md;
// bench/run_load.sh and bench/run_etcd.sh start the servers).
//
// Exit status: 0 when every cell ran cleanly, 1 when some cell hit an error
// (the table still prints), 2 on bad usage.
#include <CLI/CLI.hpp>

#include <csignal>
#include <fstream>
#include <iostream>

#include "bench/load/ceiling.h"
#include "bench/load/report.h"
#include "common/loopback.h"
#include "bench/load/suite.h"
#include "bench/load/zk_lock_client.h"

namespace {

using leasehold::bench::Endpoint;
using leasehold::bench::RatioPair;
using leasehold::bench::SuiteOptions;
using leasehold::bench::System;
using leasehold::bench::Target;

bool add_target(SuiteOptions& o, const std::string& name, System system,
                const std::string& address) {
  if (address.empty()) return true;
  auto endpoint = Endpoint::parse(address);
  if (!endpoint) {
    std::cerr << "leasehold_loadbench: --" << name << ": " << endpoint.status().message() << '\n';
    return false;
  }
  o.targets.push_back(Target{name, system, endpoint.value(), {}});
  return true;
}

// --target NAME=KIND:ADDRESS, KIND one of leasehold, leasehold-pipelined
// (RELEASE sent together with the next ACQUIRE), redis, zookeeper
// (ADDRESS host:port) or etcd-mutex / etcd-txn / etcd-logtxn (ADDRESS: etcd
// client URLs, commas; etcd-txn is the write floor and etcd-logtxn a write
// shaped like leasehold's log append, no lock: etcd_txn_client.h).
bool add_named_target(SuiteOptions& o, const std::string& spec) {
  auto fail = [&](const std::string& why) {
    std::cerr << "leasehold_loadbench: --target '" << spec << "': " << why << '\n';
    return false;
  };
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return fail("expected NAME=KIND:ADDRESS");
  auto colon = spec.find(':', eq + 1);
  if (colon == std::string::npos) return fail("expected NAME=KIND:ADDRESS");
  std::string name = spec.substr(0, eq);
  std::string kind = spec.substr(eq + 1, colon - eq - 1);
  std::string address = spec.substr(colon + 1);
  for (const auto& t : o.targets) {
    if (t.name == name) return fail("duplicate target name");
  }
  if (kind == "etcd-mutex" || kind == "etcd-txn" || kind == "etcd-logtxn") {
    if (address.empty()) return fail("no etcd endpoints");
    const System system = kind == "etcd-mutex" ? System::kEtcdMutex
                          : kind == "etcd-txn" ? System::kEtcdTxn
                                               : System::kEtcdLogTxn;
    o.targets.push_back(Target{name, system, {}, address, false});
    return true;
  }
  System system;
  bool pipeline = false;
  if (kind == "leasehold") system = System::kLeasehold;
  else if (kind == "leasehold-pipelined") system = System::kLeasehold, pipeline = true;
  else if (kind == "redis") system = System::kRedis;
  else if (kind == "zookeeper") system = System::kZookeeper;
  else return fail("unknown kind '" + kind + "' (leasehold, leasehold-pipelined, redis, zookeeper, etcd-mutex, etcd-txn, etcd-logtxn)");
  auto endpoint = Endpoint::parse(address);
  if (!endpoint) return fail(endpoint.status().message());
  o.targets.push_back(Target{name, system, endpoint.value(), {}, pipeline});
  return true;
}

// --ratio NUM/DEN: both must name targets.
bool add_ratio(const SuiteOptions& o, std::vector<RatioPair>& ratios, const std::string& spec) {
  auto slash = spec.find('/');
  RatioPair pair;
  if (slash != std::string::npos) {
    pair = RatioPair{spec.substr(0, slash), spec.substr(slash + 1)};
  }
  auto known = [&](const std::string& name) {
    for (const auto& t : o.targets) {
      if (t.name == name) return true;
    }
    return false;
  };
  if (slash == std::string::npos || !known(pair.numerator) || !known(pair.denominator)) {
    std::cerr << "leasehold_loadbench: --ratio '" << spec
              << "': expected NUM/DEN, two target names\n";
    return false;
  }
  ratios.push_back(std::move(pair));
  return true;
}

// A TCP port on 127.0.0.1 that was free a moment ago (bind to 0, read it
// back, close), for bench/run_load.sh; 0 on failure.
}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"leasehold_loadbench: leasehold vs Redis lock workloads, side by side"};
  std::string leasehold_addr, always_addr, default_addr, zookeeper_addr, csv_path;
  std::vector<std::string> named_targets, ratio_specs;
  std::vector<int> clients = {1, 8, 32, 128};
  std::vector<std::string> workloads = {"W1", "W2", "W3"};
  std::vector<long long> spin_retry_us = {100000, 0};
  long long duration_ms = 3000, warmup_ms = 200, io_timeout_ms = 15000, lease_ms = 10000;
  long long w3_requests = 0;
  std::string redis_benchmark = "redis-benchmark";
  std::string ceiling_dir, ceiling_target;
  bool quiet = false;
  bool print_free_port = false;
  bool has_zookeeper = false;

  app.add_option("--leasehold", leasehold_addr, "leasehold server host:port");
  app.add_option("--redis-always", always_addr,
                 "redis-server host:port running appendonly yes, appendfsync always");
  app.add_option("--redis-default", default_addr, "redis-server host:port, default config");
  app.add_option("--zookeeper", zookeeper_addr,
                 "ZooKeeper host:port (W1, W2 with the lock recipe; not W3)");
  app.add_option("--target", named_targets,
                 "NAME=KIND:ADDRESS, repeatable; KIND leasehold|leasehold-pipelined|redis|zookeeper (host:port) or "
                 "etcd-mutex|etcd-txn|etcd-logtxn (etcd client URLs, comma-separated; etcd-txn: one fenced write per "
                 "cycle, the floor; etcd-logtxn: one write shaped like leasehold's log append)");
  app.add_option("--ratio", ratio_specs,
                 "NUM/DEN: an extra ratio column of two target names, repeatable; an "
                 "etcd-mutex denominator also gets the etcd goals");
  app.add_option("--clients", clients, "client counts (threads = connections)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("--workloads", workloads, "subset of W1,W2,W3")->delimiter(',');
  app.add_option("--spin-retry-us", spin_retry_us,
                 "W2 Redis spin-lock retry delays in microseconds, one row each (0: no sleep)")
      ->delimiter(',')
      ->check(CLI::Range(0LL, 10000000LL));
  app.add_option("--duration-ms", duration_ms, "measured window per cell")
      ->check(CLI::Range(100LL, 600000LL));
  app.add_option("--warmup-ms", warmup_ms, "unmeasured start of each cell")
      ->check(CLI::Range(0LL, 60000LL));
  app.add_option("--io-timeout-ms", io_timeout_ms, "bound on every reply wait")
      ->check(CLI::Range(100LL, 600000LL));
  app.add_option("--lease-ms", lease_ms, "Redis PX and leasehold session TTL")
      ->check(CLI::Range(100LL, 3600000LL));
  app.add_option("--w3-requests", w3_requests,
                 "redis-benchmark -n per W3 cell (0: sized from the W1 rate)")
      ->check(CLI::Range(0LL, 100000000LL));
  app.add_option("--redis-benchmark", redis_benchmark, "redis-benchmark binary");
  app.add_option("--ceiling-dir", ceiling_dir,
                 "measure fdatasync p50 in this directory (the data dir's filesystem) before and after "
                 "the cells and print the ceiling line and columns");
  app.add_option("--ceiling-target", ceiling_target,
                 "target name whose PING RTT goes into the ceiling (default: the first leasehold target)");
  app.add_option("--csv", csv_path, "also write the results as CSV to this file");
  app.add_flag("--quiet", quiet, "no progress lines on stderr");
  app.add_flag("--free-port", print_free_port,
               "print a free TCP port on 127.0.0.1 and exit (for run_load.sh)");
  app.add_flag("--has-zookeeper", has_zookeeper,
               "exit 0 when built with the ZooKeeper C client, 1 otherwise");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (has_zookeeper) return leasehold::bench::zookeeper_available() ? 0 : 1;
  if (print_free_port) {
    auto port = leasehold::net::pick_free_port();
    if (!port) return 1;
    std::cout << *port << '\n';
    return 0;
  }

  SuiteOptions o;
  if (!add_target(o, "leasehold", System::kLeasehold, leasehold_addr) ||
      !add_target(o, "redis-always", System::kRedis, always_addr) ||
      !add_target(o, "redis-default", System::kRedis, default_addr) ||
      !add_target(o, "zookeeper", System::kZookeeper, zookeeper_addr)) {
    return 2;
  }
  for (const auto& spec : named_targets) {
    if (!add_named_target(o, spec)) return 2;
  }
  if (o.targets.empty()) {
    std::cerr << "leasehold_loadbench: give at least one of --leasehold, --redis-always, "
                 "--redis-default, --zookeeper, --target\n";
    return 2;
  }
  std::vector<RatioPair> ratios, etcd_pairs;
  for (const auto& spec : ratio_specs) {
    if (!add_ratio(o, ratios, spec)) return 2;
    for (const auto& t : o.targets) {
      if (t.name == ratios.back().denominator && t.system == System::kEtcdMutex) {
        etcd_pairs.push_back(ratios.back());
        for (const auto& f : o.targets) {
          if (f.etcd_endpoints != t.etcd_endpoints) continue;
          if (f.system == System::kEtcdTxn) etcd_pairs.back().floor = f.name;
          if (f.system == System::kEtcdLogTxn) etcd_pairs.back().log_floor = f.name;
        }
      }
    }
  }
  bool redis_goals = false;  // the leasehold vs Redis goals need those targets
  for (const auto& t : o.targets) {
    if (t.name == "leasehold" || t.system == System::kRedis) redis_goals = true;
  }
  o.clients = clients;
  o.w1 = o.w2 = o.w3 = false;
  for (const auto& w : workloads) {
    if (w == "W1" || w == "w1") o.w1 = true;
    else if (w == "W2" || w == "w2") o.w2 = true;
    else if (w == "W3" || w == "w3") o.w3 = true;
    else {
      std::cerr << "leasehold_loadbench: unknown workload '" << w << "' (W1, W2, W3)\n";
      return 2;
    }
  }
  o.spin_retry_delays.clear();
  for (auto us : spin_retry_us) o.spin_retry_delays.emplace_back(us);
  o.duration = std::chrono::milliseconds(duration_ms);
  o.warmup = std::chrono::milliseconds(warmup_ms);
  o.io_timeout = std::chrono::milliseconds(io_timeout_ms);
  o.lease_ms = lease_ms;
  o.w3_requests = w3_requests;
  o.redis_benchmark = redis_benchmark;
  o.name_prefix = "loadbench:" + std::to_string(::getpid());
  if (!quiet) o.progress = [](const std::string& line) { std::cerr << line << std::endl; };

  // The ceiling's probes run before and after the cells (ceiling.h).
  leasehold::bench::Ceiling ceiling;
  const Target* rtt_target = nullptr;
  for (const auto& t : o.targets) {
    if (ceiling_target.empty() ? t.system == System::kLeasehold : t.name == ceiling_target) {
      rtt_target = &t;
      break;
    }
  }
  if (!ceiling_target.empty() && rtt_target == nullptr) {
    std::cerr << "leasehold_loadbench: --ceiling-target '" << ceiling_target << "' is no target\n";
    return 2;
  }
  auto probe = [&](double& fsync_us, double& rtt_us) {
    if (ceiling_dir.empty()) return;
    if (auto f = leasehold::bench::probe_fsync(ceiling_dir)) fsync_us = f->p50_us;
    else std::cerr << "leasehold_loadbench: fsync probe: " << f.status().to_string() << '\n';
    if (rtt_target == nullptr) return;
    if (auto r = leasehold::bench::probe_ping(rtt_target->endpoint, o.io_timeout)) rtt_us = r->p50_us;
    else std::cerr << "leasehold_loadbench: PING probe: " << r.status().to_string() << '\n';
  };
  ceiling.fsync_dir = ceiling_dir;
  ceiling.rtt_target = rtt_target ? rtt_target->name : "none";
  probe(ceiling.fsync_before_us, ceiling.rtt_before_us);
  if (!ceiling_dir.empty()) {
    o.before_cell = [&] {
      if (auto f = leasehold::bench::probe_fsync(ceiling_dir, leasehold::bench::kBetweenCellsProbe)) {
        ceiling.fsync_between_us.push_back(f->p50_us);
      }
    };
  }
  auto rows = leasehold::bench::run_suite(o);
  probe(ceiling.fsync_after_us, ceiling.rtt_after_us);
  const leasehold::bench::Ceiling* with_ceiling = ceiling_dir.empty() ? nullptr : &ceiling;
  std::cout << "\nduration " << duration_ms << " ms per cell (+" << warmup_ms
            << " ms warm-up); W1 = lock cycles/s (acquire+release), W2 = grants/s "
               "(r = Redis retry delay), W3 = redis-benchmark SET NX PX requests/s\n\n";
  if (with_ceiling) std::cout << leasehold::bench::format_ceiling(ceiling) << '\n';
  std::cout << leasehold::bench::format_table(rows, o.targets, ratios, with_ceiling) << '\n';
  if (o.w1 || o.w2) {
    std::cout << "latency p50/p99 in ms: W1 acquire = ACQUIRE sent -> granted; W2 hand-off = the "
                 "previous holder's release sent -> the next grant\n\n"
              << leasehold::bench::format_latency_table(rows, o.targets) << '\n';
  }
  if (redis_goals) std::cout << leasehold::bench::format_goals(rows, with_ceiling);
  if (!etcd_pairs.empty()) std::cout << leasehold::bench::format_etcd_goals(rows, etcd_pairs);
  if (!csv_path.empty()) {
    std::ofstream csv(csv_path);
    csv << leasehold::bench::format_csv(rows, o.targets);
    if (!csv) {
      std::cerr << "leasehold_loadbench: cannot write " << csv_path << '\n';
      return 1;
    }
  }
  return leasehold::bench::any_errors(rows) ? 1 : 0;
}
