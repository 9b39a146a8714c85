// demo/pause_scenario.h: one run of the GC-pause scenario (pause_demo.h):
// worker A frozen mid-write past its TTL, worker B takes over and writes,
// A resumes and writes with its old token; then the verdict.
//
// The workers are `<leasehold_binary> demo worker ...` processes; the
// ledger's location reaches them in the environment variable
// kLedgerLocationEnv (a conninfo may carry a password: not in argv).
// Every wait is bounded; a worker that misbehaves is killed and the run
// reported kBroken.
// Thread-safety: one run at a time per Timeline.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "demo/ledger.h"
#include "demo/pause_demo.h"
#include "demo/timeline.h"
#include "leasehold/client.h"

namespace leasehold::demo {

inline constexpr const char* kLedgerLocationEnv = "LEASEHOLD_DEMO_LEDGER";

struct ScenarioConfig {
  std::string leasehold_binary;
  std::string endpoints;
  std::string lock;
  std::chrono::milliseconds ttl{2000};
  std::chrono::milliseconds pause{4000};
  LedgerTarget ledger;
  std::function<bool()> cancelled;  // may be empty
};

// `checker` (may be null) confirms on the server that A's session expired.
RunReport run_pause_scenario(const ScenarioConfig& config, Timeline& timeline,
                             client::Client* checker);

}  // namespace leasehold::demo
