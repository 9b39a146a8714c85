// demo/redlock_demo.h: `leasehold demo redlock`, Kleppmann's two failures of
// Redlock reproduced on one machine, then the same workers with a leasehold
// lock and its fencing token.
//
// Services: 5 private redis-server processes (independent masters) and a
// private leasehold server; the ledger (the shared resource, "billing job
// 42") is a file, written plainly by Redlock workers (Redlock has no token
// to fence with) and through FencedFileWriter by leasehold workers.
//
// Scenario 1, the holder pauses past the validity: worker A (its own
// process) takes Redlock on 5/5 servers (TTL `ttl`), decides to write and
// is frozen by SIGSTOP; its keys expire; worker B takes Redlock on a
// majority and writes; A resumes and writes: two holders, A's stale write
// replaces B's (CORRUPTED). With leasehold: A's session expires while it is
// frozen, B is granted a higher token and writes, A's write with the old
// token is REFUSED by the fenced ledger (SAFE).
//
// Scenario 2, one server's clock jumps forward: A reaches only servers 1-3
// (4 and 5 are cut off from it) and takes Redlock on 3/5 with a long TTL;
// server 3's clock jumps forward, which expires A's key there early (the
// demo forces that expiry with PEXPIRE key 1: libfaketime cannot be loaded
// into Debian's redis-server); B takes Redlock on servers 3-5, a majority,
// and writes; A, whose validity still shows most of its TTL, writes too
// (CORRUPTED). With leasehold the clock fault is real: the scenario's
// leasehold server is a second private server whose clocks, monotonic too,
// run twice as fast under libfaketime (common/clock_fault.h, as the torture
// suite's `--clock rate:X`), so it expires frozen A's session after half its
// TTL in real time, while A's own clock says the lease is still good. B is
// granted a higher token, and A's write is REFUSED (SAFE). Without
// libfaketime (Debian package `faketime`) or the clock-wait shim, LOCK.REVOKE
// stands in for the early expiry and the demo says so.
//
// One verdict line per scenario. Errors (setup only): kUnavailable (a
// service could not be started), kInvalidArgument. A run that goes wrong
// midway is reported as an unexpected outcome, not an error.
// Thread-safety: one demo at a time per object.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "demo/ledger.h"
#include "demo/pause_demo.h"
#include "demo/timeline.h"
#include "leasehold/status.h"

namespace leasehold::demo {

enum class RedlockScenario : std::uint8_t { kPause, kClockJump };

struct RedlockDemoOptions {
  std::string leasehold_binary;          // runs the workers and the private server
  std::chrono::milliseconds ttl{2000};   // scenario 1's TTL (Redlock and leasehold)
  std::function<bool()> cancelled;       // polled; true aborts (Ctrl-C). May be empty.
};

struct RedlockRunReport {
  bool leasehold = false;       // false: Redlock
  bool a_acquired = false;
  bool b_acquired = false;
  std::uint64_t token_a = 0;    // leasehold runs only
  std::uint64_t token_b = 0;
  std::optional<EventKind> write_a;
  std::optional<EventKind> write_b;
  std::optional<LedgerRecord> final_record;
  Outcome outcome = Outcome::kBroken;
  std::string broken;           // why, for kBroken
};

struct RedlockScenarioReport {
  RedlockScenario scenario = RedlockScenario::kPause;
  RedlockRunReport redlock;
  RedlockRunReport leasehold;
  bool as_expected = false;     // Redlock kCorrupted and leasehold kSafe
  std::string verdict;          // "VERDICT scenario 1 (...): Redlock CORRUPTED ...; leasehold SAFE ..."
};

struct RedlockDemoReport {
  std::vector<RedlockScenarioReport> scenarios;
  bool all_as_expected() const;
};

// The verdict line of a scenario from its two runs (pure; tested).
std::string redlock_verdict(RedlockScenario scenario, const RedlockRunReport& redlock,
                            const RedlockRunReport& leasehold, bool as_expected);

Result<RedlockDemoReport> run_redlock_demo(const RedlockDemoOptions& options, std::ostream& out);

}  // namespace leasehold::demo
