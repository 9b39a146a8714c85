#include "server/observability/loop_turn_meter.h"

#include <sys/resource.h>
#include <time.h>

#include <string>

namespace leasehold::server {

LoopTurnMeter::ThreadUsage LoopTurnMeter::thread_usage() {
  // The CPU time from the thread clock: getrusage's lags by up to a
  // scheduler tick (it does not add the running stretch since the last one).
  timespec ts{};
  rusage ru{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0 || getrusage(RUSAGE_THREAD, &ru) != 0) return {};
  return {static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec),
          static_cast<std::uint64_t>(ru.ru_nvcsw), static_cast<std::uint64_t>(ru.ru_nivcsw),
          static_cast<std::uint64_t>(ru.ru_majflt)};
}

Status LoopTurnMeter::enable(uv_loop_t* loop) {
  if (int rc = uv_loop_configure(loop, UV_METRICS_IDLE_TIME); rc != 0) {
    return Status(ErrorCode::kIoError, std::string("cannot measure the event loop's idle time: ") + uv_strerror(rc));
  }
  return Status::ok();
}

void LoopTurnMeter::on_turn(uv_loop_t* loop) {
  const std::uint64_t now = uv_hrtime();
  const std::uint64_t idle = uv_metrics_idle_time(loop);
  if (last_ns_ == 0) {
    last_usage_ = thread_usage();
    ++stats_.usage_reads;
    usage_ns_ = now;
  } else {
    const std::uint64_t wall = now - last_ns_;
    const std::uint64_t waited = idle - last_idle_ns_;
    const double busy_ms = wall > waited ? static_cast<double>(wall - waited) / 1e6 : 0.0;
    if (waited > 0) ++polls_waited_;
    ++stats_.turns;
    if (busy_ms > stats_.longest_ms) stats_.longest_ms = busy_ms;
    if (busy_ms > 100) ++stats_.over_100ms;
    if (busy_ms > 10) ++stats_.over_10ms;
    if (now - usage_ns_ >= kUsageEveryNs) {
      // Always so after a turn over 10 ms (see the header).
      const ThreadUsage usage = thread_usage();
      ++stats_.usage_reads;
      const double cpu_ms =
          usage.cpu_ns > last_usage_.cpu_ns ? static_cast<double>(usage.cpu_ns - last_usage_.cpu_ns) / 1e6 : 0.0;
      if (cpu_ms > stats_.longest_cpu_ms) stats_.longest_cpu_ms = cpu_ms;
      if (busy_ms > 10) {
        const bool slept = usage.major_faults > last_usage_.major_faults ||
                           usage.voluntary_switches - last_usage_.voluntary_switches > polls_waited_;
        if (cpu_ms > 10) {
          ++stats_.over_10ms_on_cpu;
        } else if (slept) {
          ++stats_.over_10ms_blocked;
        } else if (usage.involuntary_switches > last_usage_.involuntary_switches) {
          ++stats_.over_10ms_preempted;
        }
      }
      last_usage_ = usage;
      usage_ns_ = now;
      polls_waited_ = 0;
    }
    if (observe_) observe_(busy_ms / 1e3);
  }
  last_ns_ = now;
  last_idle_ns_ = idle;
}

}  // namespace leasehold::server
