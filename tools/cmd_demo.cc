// `leasehold demo pause`: the GC-pause scenario (a holder frozen past its
// lease writes late) against an unfenced and a fenced ledger, with a
// timeline and a verdict per run. See docs/demo.md.
// `leasehold demo worker` (hidden) is one worker process of that scenario.
// `leasehold demo redlock`: Kleppmann's two Redlock failures on 5 private
// Redis servers, then the same workers with a fenced leasehold lock
// (demo/redlock_demo.h); `leasehold demo redlock-worker` (hidden) is one
// Redlock worker. Exit status of `demo redlock`: 0 when both scenarios end
// as expected (Redlock corrupted, leasehold safe), 1 otherwise, 64, 69.
// Exit status of `demo pause`: 0 both outcomes as expected (unfenced
// corrupted, fenced safe), 1 otherwise, 64 usage, 69 a service could not be
// started or reached.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "client/cli_support.h"
#include "demo/pause_demo.h"
#include "demo/pause_scenario.h"
#include "demo/redlock_demo.h"
#include "demo/redlock_worker.h"
#include "demo/worker.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

std::string own_binary() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

struct PauseArgs {
  std::string endpoints;
  std::string pg;
  std::string pg_bin = demo::PauseDemoOptions{}.pg_bin_dir;
  std::string resource = "auto";
  std::string lock = demo::PauseDemoOptions{}.lock;
  std::string ttl = "2s";
  std::string pause = "4s";
};

int run_pause(const PauseArgs& a) {
  demo::PauseDemoOptions o;
  o.leasehold_binary = own_binary();
  o.endpoints = a.endpoints;
  o.lock = a.lock;
  o.pg_conninfo = a.pg;
  o.pg_bin_dir = a.pg_bin;
  auto ttl = cli::parse_duration(a.ttl);
  if (!ttl) return cli::report("demo pause", Status(ErrorCode::kInvalidArgument, "--ttl: " + ttl.status().message()));
  auto pause = cli::parse_duration(a.pause);
  if (!pause) return cli::report("demo pause", Status(ErrorCode::kInvalidArgument, "--pause: " + pause.status().message()));
  o.ttl = *ttl;
  o.pause = *pause;
  auto resource = demo::parse_resource_choice(a.resource);
  if (!resource) return cli::report("demo pause", resource.status());
  o.resource = *resource;

  struct sigaction sa {};
  sa.sa_handler = &on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  o.cancelled = [] { return g_interrupted != 0; };

  auto report = demo::run_pause_demo(o, std::cout);
  if (!report) {  // setup failed: bad options, or a service could not be started or reached
    cli::report("demo pause", report.status());
    return report.status().code() == ErrorCode::kInvalidArgument ? cli::kExitUsage : cli::kExitUnavailable;
  }
  return report->all_as_expected() ? cli::kExitOk : cli::kExitFailed;
}

struct WorkerArgs {
  demo::WorkerConfig config;
  std::string store = "file";
  std::uint64_t ttl_ms = 2000;
  std::uint64_t wait_ms = 10000;
};

int run_worker(WorkerArgs& a) {
  auto store = demo::parse_ledger_store(a.store);
  if (!store) return cli::report("demo worker", store.status());
  a.config.ledger.store = *store;
  const char* location = std::getenv(demo::kLedgerLocationEnv);
  a.config.ledger.location = location != nullptr ? location : "";
  a.config.ttl = std::chrono::milliseconds(a.ttl_ms);
  a.config.acquire_wait = std::chrono::milliseconds(a.wait_ms);
  a.config.event_fd = STDOUT_FILENO;
  return demo::run_worker(a.config);
}

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = &on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int run_redlock(const std::string& ttl_text) {
  demo::RedlockDemoOptions o;
  o.leasehold_binary = own_binary();
  auto ttl = cli::parse_duration(ttl_text);
  if (!ttl) return cli::report("demo redlock", Status(ErrorCode::kInvalidArgument, "--ttl: " + ttl.status().message()));
  o.ttl = *ttl;
  catch_interrupts();
  o.cancelled = [] { return g_interrupted != 0; };
  auto report = demo::run_redlock_demo(o, std::cout);
  if (!report) {
    cli::report("demo redlock", report.status());
    return report.status().code() == ErrorCode::kInvalidArgument ? cli::kExitUsage : cli::kExitUnavailable;
  }
  return report->all_as_expected() ? cli::kExitOk : cli::kExitFailed;
}

struct RedlockWorkerArgs {
  demo::RedlockWorkerConfig config;
  std::uint64_t ttl_ms = 2000;
  std::uint64_t wait_ms = 15000;
};

int run_redlock_worker(RedlockWorkerArgs& a) {
  a.config.ledger.store = demo::LedgerStore::kFile;
  const char* location = std::getenv(demo::kLedgerLocationEnv);
  a.config.ledger.location = location != nullptr ? location : "";
  a.config.ttl = std::chrono::milliseconds(a.ttl_ms);
  a.config.acquire_wait = std::chrono::milliseconds(a.wait_ms);
  a.config.event_fd = STDOUT_FILENO;
  return demo::run_redlock_worker(a.config);
}

void register_redlock(CLI::App* demo_cmd) {
  auto ttl = std::make_shared<std::string>("2s");
  auto* redlock = demo_cmd->add_subcommand(
      "redlock", "Kleppmann's two Redlock failures on 5 private Redis servers, then a fenced leasehold lock");
  redlock->add_option("--ttl", *ttl, "Scenario 1's lock TTL (A stays frozen past it)")->capture_default_str();
  redlock->callback([ttl] { cli::run_command("demo redlock", [&] { return run_redlock(*ttl); }, &set_exit_code); });

  auto wa = std::make_shared<RedlockWorkerArgs>();
  auto* worker = demo_cmd->add_subcommand("redlock-worker", "One Redlock worker of `demo redlock` (internal)");
  worker->group("");  // hidden
  worker->add_option("--role", wa->config.role)->required();
  worker->add_option("--servers", wa->config.servers)->required();
  worker->add_option("--lock", wa->config.lock)->required();
  worker->add_option("--ttl-ms", wa->ttl_ms)->check(CLI::Range(100u, 3'600'000u));
  worker->add_option("--wait-ms", wa->wait_ms)->check(CLI::Range(1u, 3'600'000u));
  worker->add_option("--entry", wa->config.ledger.entry)->required();
  worker->add_option("--start-ns", wa->config.start_ns)->required();
  worker->add_flag("--pause-before-write", wa->config.pause_before_write);
  worker->callback([wa] {
    cli::run_command("demo redlock-worker", [&] { return run_redlock_worker(*wa); }, &set_exit_code);
  });
}

void register_demo(CLI::App& app) {
  auto* demo_cmd = app.add_subcommand("demo", "Demonstrations on a real server");
  demo_cmd->require_subcommand(1);

  auto pa = std::make_shared<PauseArgs>();
  auto* pause = demo_cmd->add_subcommand(
      "pause", "The GC-pause scenario: a holder frozen past its lease writes late; unfenced vs fenced");
  pause->add_option("--endpoints,-e", pa->endpoints,
                    "Use these leasehold servers (host:port,...) instead of starting a private one");
  pause->add_option("--pg", pa->pg, "PostgreSQL conninfo for the ledger (default: a private cluster)")
      ->envname("LEASEHOLD_PG_CONNINFO");
  pause->add_option("--pg-bin", pa->pg_bin, "Where initdb/pg_ctl/postgres are, for the private cluster")
      ->envname("LEASEHOLD_PG_BIN")
      ->capture_default_str();
  pause->add_option("--resource", pa->resource,
                    "Ledger store: auto (PostgreSQL, else files), postgres, file")
      ->capture_default_str();
  pause->add_option("--lock", pa->lock, "Lock name")->capture_default_str();
  pause->add_option("--ttl", pa->ttl, "The workers' session TTL")->capture_default_str();
  pause->add_option("--pause", pa->pause, "How long worker A stays frozen (longer than --ttl)")
      ->capture_default_str();
  pause->callback([pa] {
    cli::run_command("demo pause", [&] { return run_pause(*pa); }, &set_exit_code);
  });

  auto wa = std::make_shared<WorkerArgs>();
  auto* worker = demo_cmd->add_subcommand("worker", "One worker process of `demo pause` (internal)");
  worker->group("");  // hidden
  worker->add_option("--role", wa->config.role)->required();
  worker->add_option("--endpoints", wa->config.endpoints)->required();
  worker->add_option("--lock", wa->config.lock)->required();
  worker->add_option("--ttl-ms", wa->ttl_ms)->check(CLI::Range(100u, 3'600'000u));
  worker->add_option("--wait-ms", wa->wait_ms)->check(CLI::Range(1u, 3'600'000u));
  worker->add_option("--store", wa->store);
  worker->add_option("--entry", wa->config.ledger.entry)->required();
  worker->add_flag("--fenced", wa->config.ledger.fenced);
  worker->add_option("--start-ns", wa->config.start_ns)->required();
  worker->add_flag("--pause-before-write", wa->config.pause_before_write);
  worker->callback([wa] {
    cli::run_command("demo worker", [&] { return run_worker(*wa); }, &set_exit_code);
  });
  register_redlock(demo_cmd);
}

const bool demo_registered = add_subcommand("demo", &register_demo);

}  // namespace
}  // namespace leasehold::tools
