// demo/redlock_demo.cc: `leasehold demo redlock` (see the header).
#include "demo/redlock_demo.h"

#include <unistd.h>

#include <cstdlib>

#include "common/clock_fault.h"
#include "demo/loopback.h"
#include "demo/private_redis.h"
#include "demo/private_services.h"
#include "demo/redlock_scenario.h"

namespace leasehold::demo {
namespace {

using std::chrono::milliseconds;

// Scenario 2's leasehold server runs this many times as fast: A's session
// expires after half its TTL in real time, while B's keepalives (every
// third of its TTL, real time) still arrive within its TTL on that clock.
constexpr const char* kClockRate = "2";

// The clock-wait shim libfaketime's rate mode needs (common/clock_fault.h):
// $LEASEHOLD_CLOCK_WAIT_SHIM, else beside the binary as a build tree has it,
// else in the installed library directory; "" when none is readable.
std::string find_clock_wait_shim(const std::string& leasehold_binary) {
  constexpr const char* kShim = "libleasehold_clock_wait_shim.so";
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("LEASEHOLD_CLOCK_WAIT_SHIM"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
  const auto slash = leasehold_binary.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : leasehold_binary.substr(0, slash);
  candidates.push_back(dir + "/torture/faults/" + kShim);
  candidates.push_back(dir + "/../lib/leasehold/" + kShim);
  for (const auto& c : candidates) {
    if (::access(c.c_str(), R_OK) == 0) return c;
  }
  return "";
}

std::string scenario_title(RedlockScenario s) {
  return s == RedlockScenario::kPause ? "scenario 1 (the holder pauses past the validity)"
                                      : "scenario 2 (one Redis server's clock jumps forward)";
}

std::string redlock_part(const RedlockRunReport& r) {
  switch (r.outcome) {
    case Outcome::kCorrupted: return "Redlock CORRUPTED (A and B both held the lock; A's stale write replaced B's)";
    case Outcome::kSafe: return "Redlock did not fail this time (B's write survived)";
    case Outcome::kBroken: break;
  }
  return "Redlock run BROKEN (" + r.broken + ")";
}

std::string leasehold_part(const RedlockRunReport& r) {
  switch (r.outcome) {
    case Outcome::kSafe:
      return "leasehold SAFE (A's write with token " + std::to_string(r.token_a) + " refused: B holds token " +
             std::to_string(r.token_b) + ")";
    case Outcome::kCorrupted: return "leasehold CORRUPTED (the stale write landed: a bug)";
    case Outcome::kBroken: break;
  }
  return "leasehold run BROKEN (" + r.broken + ")";
}

}  // namespace

bool RedlockDemoReport::all_as_expected() const {
  if (scenarios.empty()) return false;
  for (const auto& s : scenarios) {
    if (!s.as_expected) return false;
  }
  return true;
}

std::string redlock_verdict(RedlockScenario scenario, const RedlockRunReport& redlock,
                            const RedlockRunReport& leasehold, bool as_expected) {
  return "VERDICT " + scenario_title(scenario) + ": " + redlock_part(redlock) + "; " + leasehold_part(leasehold) +
         (as_expected ? "" : "  [UNEXPECTED]");
}

Result<RedlockDemoReport> run_redlock_demo(const RedlockDemoOptions& options, std::ostream& out) {
  if (options.leasehold_binary.empty()) return Status(ErrorCode::kInvalidArgument, "no leasehold binary");
  if (options.ttl < milliseconds(500) || options.ttl > milliseconds(60000)) {
    return Status(ErrorCode::kInvalidArgument, "--ttl must be between 500ms and 60s");
  }
  out << "Starting 5 private redis-server processes and a private leasehold server ...\n" << std::flush;
  auto redis = PrivateRedisSet::start(5);
  if (!redis) return redis.status();
  auto server = PrivateLeaseholdServer::start(options.leasehold_binary);
  if (!server) return server.status();
  // Scenario 2's leasehold server: its own, under a real clock fault when
  // libfaketime and the clock-wait shim are there (else LOCK.REVOKE stands in).
  std::unique_ptr<PrivateLeaseholdServer> clock_server;
  const std::string shim = find_clock_wait_shim(options.leasehold_binary);
  if (libfaketime_installed() && !shim.empty()) {
    auto started = PrivateLeaseholdServer::start(options.leasehold_binary, rate_clock_env(kClockRate, shim));
    if (!started) return started.status();
    clock_server = std::move(*started);
  } else {
    out << "  (libfaketime or " << "libleasehold_clock_wait_shim.so not found: scenario 2's leasehold run "
        << "forces the early expiry with LOCK.REVOKE instead of a real clock fault; apt-get install faketime)\n";
  }
  auto dir = ScratchDir::create("leasehold-demo-redlock-ledger");
  if (!dir) return dir.status();
  out << "  Redis: " << (*redis)->endpoints() << "\n  leasehold: " << (*server)->endpoint();
  if (clock_server) {
    out << "\n  leasehold with a " << kClockRate << "x fast clock (scenario 2): " << clock_server->endpoint();
  }
  out << "\n  ledger: files in " << dir->path() << " (Redlock: plain writes, it has no token; "
      << "leasehold: FencedFileWriter, refuses tokens below the highest seen)\n";

  RedlockDemoReport report;
  for (RedlockScenario scenario : {RedlockScenario::kPause, RedlockScenario::kClockJump}) {
    RedlockScenarioReport sr;
    sr.scenario = scenario;
    for (bool leasehold : {false, true}) {
      RedlockRunConfig rc;
      rc.leasehold_binary = options.leasehold_binary;
      rc.scenario = scenario;
      rc.leasehold = leasehold;
      rc.redis_ports = (*redis)->ports();
      rc.leasehold_endpoint = (*server)->endpoint();
      if (scenario == RedlockScenario::kClockJump && leasehold && clock_server) {
        rc.leasehold_endpoint = clock_server->endpoint();
        rc.clock_rate = kClockRate;
      }
      const std::string tag = std::string(scenario == RedlockScenario::kPause ? "pause" : "clock") + "-" +
                              (leasehold ? "leasehold" : "redlock");
      rc.lock = "demo/job-42/" + tag;
      rc.ttl = scenario == RedlockScenario::kPause ? options.ttl : milliseconds(10000);
      rc.ledger = LedgerTarget{LedgerStore::kFile, dir->path(), "job-42-" + tag, leasehold};
      rc.cancelled = options.cancelled;
      auto ledger = open_ledger(rc.ledger);
      if (!ledger) return ledger.status();
      if (Status st = (*ledger)->prepare("no result yet"); !st) return st;
      out << "\n=== " << scenario_title(scenario) << ", "
          << (leasehold ? "leasehold lock + fencing token" : "Redlock over 5 Redis servers") << ", TTL "
          << seconds_text(rc.ttl) << " ===\n";
      Timeline tl(out, SteadyClock::now());
      RedlockRunReport run = run_redlock_run(rc, tl);
      if (options.cancelled && options.cancelled()) return Status(ErrorCode::kUnavailable, "interrupted");
      (leasehold ? sr.leasehold : sr.redlock) = std::move(run);
    }
    sr.as_expected = sr.redlock.outcome == Outcome::kCorrupted && sr.leasehold.outcome == Outcome::kSafe;
    sr.verdict = redlock_verdict(scenario, sr.redlock, sr.leasehold, sr.as_expected);
    report.scenarios.push_back(std::move(sr));
  }
  out << "\n";
  for (const auto& s : report.scenarios) out << s.verdict << "\n";
  out << std::flush;
  return report;
}

}  // namespace leasehold::demo
