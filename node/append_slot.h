// node/append_slot.h: AppendSlot, the one log append a node has in flight
// at a time (node.h, GROUP COMMIT), and whether a task to start the next
// one is already posted.
//
// Group commit hands it the batch it appends (begin(batch)) and takes it
// back when the log answered (finish()). Lease mode (node/lease_commit.cc)
// keeps the chunks it writes itself and uses begin(now) / finish().
// last_latency() is how long the last finished append took (commit linger,
// lease-mode pacing).
//
// Invariant: begin() only while not busy(); finish() only while busy().
// Errors: none. Ownership: owns the batch in flight.
// Thread-safety: loop thread only.
#pragma once

#include <chrono>
#include <cstddef>

#include "node/clock.h"
#include "node/commit_batch.h"

namespace leasehold::node {

class AppendSlot {
 public:
  bool busy() const { return busy_; }
  // The commands of the group-commit batch in flight (0 in lease mode).
  std::size_t commands() const { return batch_.commands.size(); }
  TimePoint started() const { return started_; }
  std::chrono::steady_clock::duration last_latency() const { return last_latency_; }

  void begin(Batch batch, TimePoint now);
  void begin(TimePoint now) { begin(Batch{}, now); }
  // Not busy any more; records the latency and returns the batch.
  Batch finish(TimePoint now);

  // A task that starts the next append is posted (schedule_append()).
  bool scheduled() const { return scheduled_; }
  void set_scheduled(bool scheduled) { scheduled_ = scheduled; }

 private:
  Batch batch_;
  bool busy_ = false;
  bool scheduled_ = false;
  TimePoint started_{};
  std::chrono::steady_clock::duration last_latency_{};
};

}  // namespace leasehold::node
