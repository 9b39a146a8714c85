// `leasehold lock NAME [options] -- CMD ARGS...`: runs CMD while holding the
// lock. CMD sees LEASEHOLD_LOCK, LEASEHOLD_TOKEN, LEASEHOLD_SESSION and
// LEASEHOLD_ENDPOINT. CMD runs in its own process group; if the lease is lost
// the whole group gets SIGTERM, then SIGKILL after --grace, and the lock is
// released only when no process of the group is left. While it waits, it
// names the holder: a redrawn line on a terminal, a line every 5 s in a log
// (--progress, the default; --no-progress: quiet; tools/lock_progress.h).
// With --max-hold the lock is taken with that LEASE, and the group is stopped
// the same way when the hold ends (exit 79).
// Exit status: CMD's own (128+signal if it was killed), or 75 not acquired,
// 76 lost, 79 max hold reached, 64 usage, 69 unreachable, 126/127 CMD cannot run / not found
// (common/exit_codes.h, docs/client.md).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <chrono>
#include <iterator>
#include <optional>
#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/cli_support.h"
#include "common/child_exec.h"
#include "common/process_group.h"
#include "core/types.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"
#include "tools/lock_progress.h"
#include "tools/registry.h"
#include "tools/subcommands.h"

namespace leasehold::tools {
namespace {

using client::Millis;

struct LockArgs {
  cli::CommonOptions common;
  std::string name;
  std::string ttl = "10s";
  std::string wait = "30s";
  std::string grace = "10s";
  std::string close_grace = "0";  // ONCLOSE: a killed `leasehold lock` frees the lock at once
  bool no_close_grace = false;
  std::string max_hold;  // empty: no LEASE
  bool shared = false;
  unsigned limit = 0;
  bool progress = true;          // --progress / --no-progress
  std::string progress_interval = "5s";  // hidden: the log line's period (tests)
  std::vector<std::string> command;
};

// The longest TTL any server accepts (core/types.h): a longer --ttl is a
// usage error before anything is sent.
constexpr Millis kLongestTtl{static_cast<Millis::rep>(core::kMaxSessionTtlMs)};

// Signals to forward to CMD's process group, set by the handler.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
volatile std::sig_atomic_t g_pending[std::size(kForwarded)] = {};
void remember_signal(int sig) {
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
    if (kForwarded[i] == sig) g_pending[i] = 1;
  }
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_handler = &remember_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) sigaction(sig, &sa, nullptr);
}

// After SIGKILL, how long to wait for the group to vanish (a process stuck
// in the kernel) before giving up on it.
constexpr auto kAfterKill = std::chrono::seconds(10);

struct Outcome {
  int wait_status = 0;
  bool lost = false;
  bool hold_ended = false;  // --max-hold reached (a loss of its own kind)
};

// Runs CMD's group to its end. A forwarded signal goes to the whole group
// (SIGKILL follows after `grace`); a lost lease stops the group (SIGTERM, then
// SIGKILL after `grace`); processes left in the group after CMD exits are
// stopped the same way, so that nothing started under the lock outlives it.
Outcome supervise(proc::ProcessGroup& group, const client::LockGuard& guard, Millis grace,
                  const std::string& max_hold) {
  Outcome out;
  std::optional<client::Clock::time_point> give_up;
  bool leftovers = false;
  while (true) {
    group.reap();
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
      if (g_pending[i] == 0) continue;
      g_pending[i] = 0;
      group.signal(kForwarded[i]);
      group.kill_after(grace);
    }
    if (!out.lost && !guard.valid()) {
      out.lost = true;
      out.hold_ended = guard.lease_over() || guard.status().message().find("lease-ended") != std::string::npos;
      if (out.hold_ended) {
        std::cerr << "leasehold lock: the max hold (" << max_hold << ") of lock '" << guard.name()
                  << "' ended; stopping the command (SIGTERM, then SIGKILL after --grace)\n";
      } else {
        std::cerr << "leasehold lock: lost lock '" << guard.name()
                  << "': " << guard.status().message() << "; stopping the command\n";
      }
      group.stop(grace);
    }
    const bool empty = group.empty();
    if (group.command_status() && empty) {
      out.wait_status = *group.command_status();
      return out;
    }
    if (group.command_status() && !leftovers && !group.stopping()) {
      leftovers = true;
      std::cerr << "leasehold lock: the command exited; stopping the processes it left in its group\n";
      group.stop(grace);
    }
    group.tick();
    if (group.killed() && !give_up) give_up = client::Clock::now() + kAfterKill;
    if (give_up && client::Clock::now() >= *give_up) {
      std::cerr << "leasehold lock: processes of group " << group.pgid()
                << " are still there after SIGKILL; giving up on them\n";
      out.wait_status = group.command_status().value_or(SIGKILL);  // as if killed by it
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int run_lock(LockArgs& a) {
  auto ttl = cli::parse_duration(a.ttl);
  if (!ttl) return cli::report("lock", Status(ttl.status().code(), "--ttl: " + ttl.status().message()));
  if (ttl->count() == 0 || *ttl > kLongestTtl) {
    return cli::report("lock", Status(ErrorCode::kInvalidArgument,
                                      "--ttl: '" + a.ttl + "' is out of range (from 1ms to " +
                                          cli::human_duration(kLongestTtl) + ", " +
                                          std::to_string(kLongestTtl.count()) + "ms; the server may allow less)"));
  }
  auto progress_interval = cli::parse_duration(a.progress_interval);
  if (!progress_interval || progress_interval->count() == 0) {
    return cli::report("lock", Status(ErrorCode::kInvalidArgument,
                                      "--progress-interval: '" + a.progress_interval + "' must be a duration > 0"));
  }
  auto wait = cli::parse_duration(a.wait);
  if (!wait) return cli::report("lock", Status(wait.status().code(), "--wait: " + wait.status().message()));
  auto grace = cli::parse_duration(a.grace);
  if (!grace) return cli::report("lock", Status(grace.status().code(), "--grace: " + grace.status().message()));
  auto close_grace = cli::parse_duration(a.close_grace);
  if (!close_grace) {
    return cli::report("lock", Status(close_grace.status().code(), "--close-grace: " + close_grace.status().message()));
  }
  std::optional<Millis> max_hold;
  if (!a.max_hold.empty()) {
    auto hold = cli::parse_duration(a.max_hold);
    if (!hold) return cli::report("lock", Status(hold.status().code(), "--max-hold: " + hold.status().message()));
    if (hold->count() <= 0 || static_cast<std::uint64_t>(hold->count()) > 2147483647ULL) {
      return cli::report("lock", Status(ErrorCode::kInvalidArgument,
                                        "--max-hold: must be above 0 and at most 2147483647ms (about 24.8 days)"));
    }
    max_hold = *hold;
  }
  if (a.command.empty()) {
    return cli::report("lock", Status(ErrorCode::kInvalidArgument, "no command given (use -- CMD ARGS...)"));
  }
  // Before taking the lock: a command that cannot run should not wait for it.
  if (Status runnable = proc::find_command(a.command[0]); !runnable) {
    std::cerr << "leasehold lock: " << runnable.message() << "\n";
    return runnable.code() == ErrorCode::kNotFound ? cli::kExitNotFound : cli::kExitCannotRun;
  }
  auto client = cli::make_client(a.common, "leasehold-lock");
  if (!client) return cli::report("lock", client.status());

  client::SessionOptions so;
  so.ttl = *ttl;
  if (!a.no_close_grace) so.close_grace = *close_grace;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  so.owner = "leasehold lock pid " + std::to_string(getpid()) + "@" + host;
  auto session = client::Session::open(*client, so);
  if (!session) return cli::report("lock", session.status());

  client::LockOptions lo;
  if (max_hold) lo.lease = *max_hold;
  if (a.shared) lo.mode = client::LockMode::kShared;
  if (a.limit > 0) {
    lo.mode = client::LockMode::kSemaphore;
    lo.limit = a.limit;
  }
  auto guard = [&] {
    if (wait->count() == 0) return client::LockGuard::try_acquire(**session, a.name, lo);
    // Who holds the lock, while waiting: a redrawn line on a terminal, a
    // line every --progress-interval in a log.
    WaitProgress progress(*client, a.name, progress_style(a.progress), *progress_interval);
    return client::LockGuard::acquire(**session, a.name, *wait, lo);
  }();
  if (!guard) {
    const Status& st = guard.status();
    if (st.code() == ErrorCode::kTimedOut || st.code() == ErrorCode::kWouldBlock) {
      std::cerr << "leasehold lock: lock '" << a.name << "' not acquired "
                << (wait->count() == 0 ? std::string("(tried once, --wait 0)") : "within " + a.wait) << ": "
                << describe_holders_now(**client, a.name) << "\n";
      return cli::kExitNotAcquired;
    }
    return cli::report("lock", st);
  }

  auto plan = proc::plan_exec(a.command, {{"LEASEHOLD_LOCK", a.name},
                                     {"LEASEHOLD_TOKEN", std::to_string(guard->token())},
                                     {"LEASEHOLD_SESSION", std::to_string((*session)->id())},
                                     {"LEASEHOLD_ENDPOINT", (*client)->current_endpoint()}});
  install_forwarding();
  // SIGTERM to CMD if `leasehold lock` dies (even by kill -9): its lease will lapse.
  auto group = proc::ProcessGroup::start(plan, SIGTERM);
  if (!group) {
    std::cerr << "leasehold lock: " << group.status().message() << "\n";
    const int code = group.status().code() == ErrorCode::kNotFound ? cli::kExitNotFound : cli::kExitCannotRun;
    (void)guard->release();
    (void)(*session)->close();
    return code;
  }
  const Outcome outcome = supervise(**group, *guard, *grace, a.max_hold);
  const bool lost = outcome.lost;
  const int wstatus = outcome.wait_status;
  group->reset();  // the terminal back to us
  if (outcome.hold_ended) {
    (void)guard->release();  // ends on the server soon anyway; free it now if it has not
    (void)(*session)->close();
    return cli::kExitHoldEnded;
  }
  if (lost) return cli::kExitLost;
  Status released = guard->release();
  if (released.code() == ErrorCode::kNotHolder || released.code() == ErrorCode::kSessionExpired ||
      released.code() == ErrorCode::kStaleToken) {
    std::cerr << "leasehold lock: lock '" << a.name
              << "' was lost before the command ended: " << released.message() << "\n";
    return cli::kExitLost;
  }
  if (!released) cli::report("lock", released);  // CMD finished; still report a failed release
  (void)(*session)->close();
  return proc::exit_code_of(wstatus, cli::kExitInternal);
}

void register_lock(CLI::App& app) {
  auto args = std::make_shared<LockArgs>();
  auto* cmd = app.add_subcommand("lock", "Run a command while holding a lock");
  cmd->add_option("name", args->name, "Lock name")->required();
  cmd->add_option("command", args->command, "The command and its arguments, after --")
      ->required();
  cmd->add_option("--ttl", args->ttl, "Session TTL: how soon a dead holder's lock frees (10s, 1.5s, 2m)")
      ->capture_default_str();
  cmd->add_option("--wait", args->wait, "How long to wait for the lock (0: try once; 500ms, 1.5s, 2m)")
      ->capture_default_str();
  cmd->add_option("--grace", args->grace, "After a loss: SIGTERM, then SIGKILL after this")
      ->capture_default_str();
  auto* no_close = cmd->add_flag("--no-close-grace", args->no_close_grace,
                                 "Keep the lock until the TTL even when this process dies (no ONCLOSE)");
  cmd->add_option("--close-grace", args->close_grace,
                  "If this process dies (its connection closes), free the lock after this (0: at once)")
      ->capture_default_str()
      ->excludes(no_close);
  cmd->add_option("--max-hold", args->max_hold,
                  "Hold the lock at most this long (LEASE): then stop the command (SIGTERM, SIGKILL after "
                  "--grace) and exit 79 (10m, 90s)");
  auto* shared = cmd->add_flag("--shared", args->shared, "Take the lock in shared (reader) mode");
  cmd->add_option("--limit", args->limit, "Semaphore: at most N holders")
      ->check(cli::whole_number(1, 1'000'000))
      ->excludes(shared);
  cmd->add_flag("--progress,!--no-progress", args->progress,
                "While waiting, say who holds the lock (on by default): a redrawn line on a terminal, "
                "else a line every 5s for logs");
  cmd->add_option("--progress-interval", args->progress_interval, "How often the log line is printed")
      ->group("");  // hidden: tests use a short one
  cli::add_common_options(*cmd, args->common, false);
  cmd->callback([args] {
    cli::run_command("lock", [&] { return run_lock(*args); }, &set_exit_code);
  });
}

const bool lock_registered = add_subcommand("lock", &register_lock);

}  // namespace
}  // namespace leasehold::tools
