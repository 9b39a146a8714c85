// node/log_clock.h: the log clock (node.h, LOG CLOCK): milliseconds that
// continue from the highest value the log holds and advance with the Clock,
// never backwards.
//
// It is based at (steady time, log time) and reads base + elapsed; stamp()
// remembers what it handed out, so a later reading never falls below it
// (steady time that stood still, or a rebase). steady_of() maps a log time
// back to steady time for timers, saturating where a steady time_point
// cannot hold the value.
//
// Errors: none. Ownership: borrows the Clock (it outlives the Node).
// Thread-safety: loop thread only, like the Node.
#pragma once

#include "core/types.h"
#include "node/clock.h"

namespace leasehold::node {

class LogClock {
 public:
  // Based at clock.now() and log time `start` (StateMachine::last_now()).
  LogClock(Clock& clock, core::LogMillis start);

  // Log time now: base + elapsed, never below the last stamp.
  core::LogMillis now() const;
  // now(), remembered as the floor of every later reading (Command::now).
  core::LogMillis stamp();
  // The steady time at which log time `at` is reached (the base for a past
  // time; saturates far in the future).
  TimePoint steady_of(core::LogMillis at) const;
  // Bases the clock again at clock.now(), from `floor` or the last stamp,
  // whichever is higher (the state machine was replaced or the node was
  // promoted: time spent as a standby is not counted).
  void rebase(core::LogMillis floor);

 private:
  Clock& clock_;
  TimePoint base_steady_;
  core::LogMillis base_log_ = 0;
  core::LogMillis last_stamp_ = 0;
};

}  // namespace leasehold::node
