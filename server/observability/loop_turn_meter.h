// server/observability/loop_turn_meter.h: how long each turn of the event loop kept it
// busy, as the server itself sees it: the wall time from one turn to the
// next minus the time libuv spent waiting in poll (libuv's idle-time
// metric). A turn that runs for 300 ms answers no PING, accepts no
// connection and fires no timer for 300 ms, whatever the clients see; a
// client-side probe (bench/capacity) mixes that with plain queueing.
//
// A busy turn is not all the server's work: on a machine with more runnable
// threads than cores, the kernel may take the loop thread off the CPU in
// the middle of a turn. So each turn is also measured in the loop thread's
// own CPU time (CLOCK_THREAD_CPUTIME_ID, which does not advance while the
// thread waits in poll, sleeps or is descheduled). A long turn with as much
// CPU time was the server's work. The CPU time is taken from one turn to the
// next, so it also holds the poll's own CPU time (entering and leaving the
// kernel, and on the first polls lazy symbol binding and page faults), which
// libuv counts as idle: a turn's CPU time may exceed its busy time by that
// much (tens of microseconds; a few tenths of a millisecond measured on the
// first turns of an ASan build), never by more than what the poll itself ran.
//
// A long turn off the CPU is told apart by the loop thread's context
// switches and major page faults during it (getrusage(RUSAGE_THREAD)):
//  - blocked: the thread slept in the turn (a lock, a disk read, a major
//    page fault): the server waited for something;
//  - preempted: it did not sleep but was taken off the CPU (involuntary
//    switches): it waited for a core that other threads were using.
// The poll that starts each turn may sleep once itself. libuv counts idle
// time only when it polls with a timeout, so when the idle time grew, one
// voluntary switch is the poll's and any other is the turn's (a poll that
// found events at once after counting idle time did not sleep; then one
// sleep of the turn goes unseen, and the turn counts as preempted if it was
// also descheduled). A turn that neither slept nor was preempted is in
// neither count.
//
// Reading the thread's CPU time and getrusage() are two system calls, and a
// loaded server turns its loop 40,000 times a second or more: read every
// turn they cost 6-9% of lease-mode W2 (1.3-1.5 system calls per command).
// So they are read at the end of a turn only when kUsageEveryNs (1 ms) has
// passed since the last reading. The CPU time, switches and faults then
// cover the turn plus at most 1 ms of the turns before it, and each of those
// turns' polls that waited counts as one sleep of its own. A turn over
// 10 ms always ends with a reading (1 ms had passed), so its
// classification holds up to that margin: up to 1 ms of earlier CPU time,
// and an earlier turn's preemption or sleep within that millisecond.
// longest_cpu_ms is the longest such span's CPU time.
//
// Use: enable() on the loop before it runs, then on_turn() once per turn
// (the server calls it from its prepare handle, just before poll), always
// from the loop's thread.
// Thread-safety: loop thread only; stats() too.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>

#include "leasehold/status.h"

namespace leasehold::server {

class LoopTurnMeter {
 public:
  struct Stats {
    double longest_ms = 0;          // busy wall time, since start
    std::uint64_t turns = 0;
    std::uint64_t over_10ms = 0;
    std::uint64_t over_100ms = 0;
    double longest_cpu_ms = 0;           // the loop thread's CPU time in one turn, since start
    std::uint64_t over_10ms_on_cpu = 0;  // turns with over 10 ms of CPU time (a subset of over_10ms)
    // The other turns over 10 ms (at most 10 ms of CPU time), by why the
    // thread was off the CPU (see above).
    std::uint64_t over_10ms_blocked = 0;
    std::uint64_t over_10ms_preempted = 0;
    std::uint64_t usage_reads = 0;  // how often the thread's CPU time and rusage were read
  };

  // The least time between two readings of the thread's usage.
  static constexpr std::uint64_t kUsageEveryNs = 1'000'000;

  // Turns on libuv's idle-time metric for `loop` (kIoError if libuv refuses).
  static Status enable(uv_loop_t* loop);

  // `observe` (optional) gets each turn's busy time in seconds (a histogram).
  explicit LoopTurnMeter(std::function<void(double)> observe = {}) : observe_(std::move(observe)) {}

  void on_turn(uv_loop_t* loop);
  const Stats& stats() const { return stats_; }

 private:
  // The calling thread's CPU time and what getrusage(RUSAGE_THREAD) counts.
  struct ThreadUsage {
    std::uint64_t cpu_ns = 0;
    std::uint64_t voluntary_switches = 0;
    std::uint64_t involuntary_switches = 0;
    std::uint64_t major_faults = 0;
  };
  // All zero if either call fails (Linux fails neither; then no turn
  // counts as on CPU, blocked or preempted).
  static ThreadUsage thread_usage();

  std::function<void(double)> observe_;
  std::uint64_t last_ns_ = 0;       // uv_hrtime() at the previous turn (0 = none yet)
  std::uint64_t last_idle_ns_ = 0;  // uv_metrics_idle_time() then
  std::uint64_t usage_ns_ = 0;      // uv_hrtime() at the last reading of the thread's usage
  ThreadUsage last_usage_;          // the loop thread's usage then
  std::uint64_t polls_waited_ = 0;  // turns since that reading whose poll counted idle time
  Stats stats_;
};

}  // namespace leasehold::server
