// `leasehold lock NAME [options] -- CMD ARGS...`: runs CMD while holding the
// lock. CMD sees LEASEHOLD_LOCK, LEASEHOLD_TOKEN, LEASEHOLD_SESSION and
// LEASEHOLD_ENDPOINT. If the lease is lost, CMD gets SIGTERM, then SIGKILL
// after --grace. Exit status: CMD's own (128+signal if it was killed), or
// 75 not acquired, 76 lost, 64 usage, 69 unreachable (see docs/client.md).
#include <CLI/CLI.hpp>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/cli_support.h"
#include "common/child_exec.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"
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
  bool shared = false;
  unsigned limit = 0;
  std::vector<std::string> command;
};

volatile std::sig_atomic_t g_signal = 0;  // the last forwarded-signal candidate
void remember_signal(int sig) { g_signal = sig; }

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_handler = &remember_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
}

// Everything the child needs, prepared before fork (only async-signal-safe
// calls happen between fork and exec).
[[noreturn]] void exec_child(const proc::ExecPlan& plan, pid_t parent) {
  proc::reset_signals_in_child({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE});
  // If `leasehold lock` dies (even by kill -9), its lease will lapse: stop CMD.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(cli::kExitLost);
  execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  const int err = errno;
  static const char kMsg[] = "leasehold lock: cannot run the command\n";
  [[maybe_unused]] auto n = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  _exit(err == ENOENT ? cli::kExitNotFound : cli::kExitCannotRun);
}

// Runs the child to its end; stops it when `guard` is lost. Returns its wait
// status and whether the lease was lost.
std::pair<int, bool> supervise(pid_t pid, const client::LockGuard& guard, Millis grace) {
  bool lost = false;
  bool killed = false;
  auto lost_at = client::Clock::now();
  while (true) {
    int wstatus = 0;
    pid_t r = waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) return {wstatus, lost};
    if (r < 0 && errno != EINTR) return {0, lost};
    if (int sig = g_signal; sig != 0) {
      g_signal = 0;
      kill(pid, sig);
    }
    if (!lost && !guard.valid()) {
      lost = true;
      lost_at = client::Clock::now();
      std::cerr << "leasehold lock: lost lock '" << guard.name()
                << "': " << guard.status().message() << "; stopping the command\n";
      kill(pid, SIGTERM);
    }
    if (lost && !killed && client::Clock::now() - lost_at >= grace) {
      killed = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int run_lock(LockArgs& a) {
  auto ttl = cli::parse_duration(a.ttl);
  if (!ttl) return cli::report("lock", Status(ttl.status().code(), "--ttl: " + ttl.status().message()));
  auto wait = cli::parse_duration(a.wait);
  if (!wait) return cli::report("lock", Status(wait.status().code(), "--wait: " + wait.status().message()));
  auto grace = cli::parse_duration(a.grace);
  if (!grace) return cli::report("lock", Status(grace.status().code(), "--grace: " + grace.status().message()));
  if (a.command.empty()) {
    return cli::report("lock", Status(ErrorCode::kInvalidArgument, "no command given (use -- CMD ARGS...)"));
  }
  auto client = cli::make_client(a.common, "leasehold-lock");
  if (!client) return cli::report("lock", client.status());

  client::SessionOptions so;
  so.ttl = *ttl;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  so.owner = "leasehold lock pid " + std::to_string(getpid()) + "@" + host;
  auto session = client::Session::open(*client, so);
  if (!session) return cli::report("lock", session.status());

  client::LockOptions lo;
  if (a.shared) lo.mode = client::LockMode::kShared;
  if (a.limit > 0) {
    lo.mode = client::LockMode::kSemaphore;
    lo.limit = a.limit;
  }
  auto guard = wait->count() == 0 ? client::LockGuard::try_acquire(**session, a.name, lo)
                                  : client::LockGuard::acquire(**session, a.name, *wait, lo);
  if (!guard) {
    const Status& st = guard.status();
    if (st.code() == ErrorCode::kTimedOut || st.code() == ErrorCode::kWouldBlock) {
      std::cerr << "leasehold lock: lock '" << a.name << "' not acquired within " << a.wait << "\n";
      return cli::kExitNotAcquired;
    }
    return cli::report("lock", st);
  }

  auto plan = proc::plan_exec(a.command, {{"LEASEHOLD_LOCK", a.name},
                                     {"LEASEHOLD_TOKEN", std::to_string(guard->token())},
                                     {"LEASEHOLD_SESSION", std::to_string((*session)->id())},
                                     {"LEASEHOLD_ENDPOINT", (*client)->current_endpoint()}});
  install_forwarding();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return cli::report("lock", Status(ErrorCode::kIoError, "fork failed"));
  if (pid == 0) exec_child(plan, parent);

  auto [wstatus, lost] = supervise(pid, *guard, *grace);
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
  cmd->add_option("--ttl", args->ttl, "Session TTL: how soon a dead holder's lock frees")
      ->capture_default_str();
  cmd->add_option("--wait", args->wait, "How long to wait for the lock (0: try once)")
      ->capture_default_str();
  cmd->add_option("--grace", args->grace, "After a loss: SIGTERM, then SIGKILL after this")
      ->capture_default_str();
  auto* shared = cmd->add_flag("--shared", args->shared, "Take the lock in shared (reader) mode");
  cmd->add_option("--limit", args->limit, "Semaphore: at most N holders")
      ->check(CLI::Range(1u, 1'000'000u))
      ->excludes(shared);
  cli::add_common_options(*cmd, args->common, false);
  cmd->callback([args] {
    cli::run_command("lock", [&] { return run_lock(*args); }, &set_exit_code);
  });
}

const bool registered = add_subcommand(&register_lock);

}  // namespace
}  // namespace leasehold::tools
