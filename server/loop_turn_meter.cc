#include "server/loop_turn_meter.h"

#include <time.h>

#include <string>

namespace leasehold::server {

namespace {
// The calling thread's CPU time in ns (0 if the clock is unavailable, which
// Linux never reports for this clock; then no turn counts as on CPU).
std::uint64_t thread_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

Status LoopTurnMeter::enable(uv_loop_t* loop) {
  if (int rc = uv_loop_configure(loop, UV_METRICS_IDLE_TIME); rc != 0) {
    return Status(ErrorCode::kIoError, std::string("cannot measure the event loop's idle time: ") + uv_strerror(rc));
  }
  return Status::ok();
}

void LoopTurnMeter::on_turn(uv_loop_t* loop) {
  const std::uint64_t now = uv_hrtime();
  const std::uint64_t idle = uv_metrics_idle_time(loop);
  const std::uint64_t cpu = thread_cpu_ns();
  if (last_ns_ != 0) {
    const std::uint64_t wall = now - last_ns_;
    const std::uint64_t waited = idle - last_idle_ns_;
    const double busy_ms = wall > waited ? static_cast<double>(wall - waited) / 1e6 : 0.0;
    const double cpu_ms = cpu > last_cpu_ns_ ? static_cast<double>(cpu - last_cpu_ns_) / 1e6 : 0.0;
    ++stats_.turns;
    if (busy_ms > stats_.longest_ms) stats_.longest_ms = busy_ms;
    if (busy_ms > 10) ++stats_.over_10ms;
    if (busy_ms > 100) ++stats_.over_100ms;
    if (cpu_ms > stats_.longest_cpu_ms) stats_.longest_cpu_ms = cpu_ms;
    if (cpu_ms > 10 && busy_ms > 10) ++stats_.over_10ms_on_cpu;
    if (observe_) observe_(busy_ms / 1e3);
  }
  last_ns_ = now;
  last_idle_ns_ = idle;
  last_cpu_ns_ = cpu;
}

}  // namespace leasehold::server
