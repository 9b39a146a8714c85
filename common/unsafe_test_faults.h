// common/unsafe_test_faults.h: test-only switches that BREAK a safety
// property on purpose, so that the fault-injection suite (docs/torture.md,
// docs/faults.md) can show that its checker catches each break.
//
// NEVER for production. `leasehold server --unsafe-test-fault NAME` turns one
// on, and only when the environment has LEASEHOLD_UNSAFE_TEST_FAULTS=1
// (tools/cmd_server.cc refuses otherwise and logs every enabled switch at
// critical level). Every switch is off by default; each acts in one small,
// marked branch ("UNSAFE TEST FAULT") of the production code:
//   ack-before-fsync           the embedded log writes without fsync and the
//                              node answers at once (log/rocksdb_log.cc)
//   expire-early               sessions expire at half their TTL
//                              (node/timers.cc)
//   skip-fence-check           FENCE.PUT accepts any token (core/fence_kv.cc)
//   reuse-token-after-restart  the revision guard trusts the log at a restart:
//                              no refusal of a log that lost data, no jump
//                              above the reserved block (node/revision_guard.cc)
//   grant-two-waiters          a release grants an exclusive lock to the first
//                              two queued exclusive waiters (core/locks.cc)
//   slow-etcd-append-reply     breaks no promise, only timing: the etcd log
//                              hands each committed append back to the node
//                              2 s late (log/etcd_log.cc), so its entry comes
//                              back on the log watch first (a regression test
//                              of the promotion after a step-down)
//   hold-first-append          breaks no promise, only timing: the embedded
//                              log's first append waits (60 s at most) until
//                              the file <data dir>/release-first-append
//                              exists, then deletes it (log/rocksdb_log.cc),
//                              so a test can look at a start whose Reopen
//                              is not durable yet
//   skip-quarantine            after an unclean stop of a `lease`-mode run,
//                              the start expires every session but grants
//                              at once: no quarantine (node/revision_guard.cc)
//
// Thread-safety: enable() is called once at start, before any other thread
// reads the switches; enabled() may then be called from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::unsafe {

enum class TestFault : unsigned {
  kAckBeforeFsync,
  kExpireEarly,
  kSkipFenceCheck,
  kReuseTokenAfterRestart,
  kGrantTwoWaiters,
  kSlowEtcdAppendReply,
  kHoldFirstAppend,
  kSkipQuarantine,
};

// The switch names, in TestFault order.
const std::vector<std::string_view>& test_fault_names();
// Turns on the switch called `name`. kInvalidArgument (listing the names)
// for an unknown name.
Status enable_test_fault(std::string_view name);
bool enabled(TestFault fault);
// Turns every switch off (for unit tests in one process).
void disable_all_test_faults();

}  // namespace leasehold::unsafe
