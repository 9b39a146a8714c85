// node/node_counters.h: NodeCounters, the node's monotonic counters for
// NodeStats (node/node_stats.cc). Each is bumped by the part of the node that
// does the counted thing; nothing reads them but stats().
//
// Thread-safety: loop thread only.
#pragma once

#include <cstdint>

namespace leasehold::node {

struct NodeCounters {
  std::uint64_t batches_committed = 0;
  std::uint64_t commands_committed = 0;
  std::uint64_t apply_steps_deferred = 0;  // apply continuations posted
  std::uint64_t snapshots_saved = 0;
  std::uint64_t snapshot_steps = 0;
  std::uint64_t replayed_entries = 0;     // at open
  std::uint64_t catch_up_recoveries = 0;  // reset_to_snapshot() successes
  std::uint64_t promotions = 0;
  std::uint64_t step_downs = 0;
};

}  // namespace leasehold::node
