// demo/redlock_scenario.h: one run of `leasehold demo redlock`
// (redlock_demo.h): worker A takes the lock and is frozen mid-write, the
// scenario's failure is brought about (A's keys expire / one server's
// clock jumps), worker B takes the lock and writes, A resumes and writes.
// In scenario 2 the leasehold run's server runs with a fast clock
// (`clock_rate`, libfaketime: common/clock_fault.h): the run waits until
// that server expires A's session, which happens before A's TTL has passed
// in real time; without a clock fault (libfaketime missing) LOCK.REVOKE
// stands in for the early expiry, and says so.
// Redlock runs use `leasehold demo redlock-worker`; leasehold runs use
// `leasehold demo worker` (the pause demo's worker, fenced ledger).
// Every wait is bounded; a misbehaving worker is killed and the run is
// reported kBroken. Thread-safety: one run at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "demo/redlock_demo.h"

namespace leasehold::demo {

struct RedlockRunConfig {
  std::string leasehold_binary;
  RedlockScenario scenario = RedlockScenario::kPause;
  bool leasehold = false;
  std::vector<std::uint16_t> redis_ports;  // the 5 Redis servers
  std::string leasehold_endpoint;
  std::string lock;
  std::chrono::milliseconds ttl{2000};
  std::string clock_rate;                  // scenario 2, leasehold: the server's clock rate ("" = no fault)
  LedgerTarget ledger;                     // file store; `fenced` set for leasehold runs
  std::function<bool()> cancelled;
};

RedlockRunReport run_redlock_run(const RedlockRunConfig& config, Timeline& timeline);

}  // namespace leasehold::demo
