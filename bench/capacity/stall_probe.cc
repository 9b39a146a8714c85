#include "bench/capacity/stall_probe.h"

#include <algorithm>
#include <utility>

#include "bench/load/load_runner.h"

namespace leasehold::bench {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

StallProbe::StallProbe(Endpoint endpoint, double threshold_ms, std::chrono::milliseconds io_timeout)
    : endpoint_(std::move(endpoint)), threshold_ms_(threshold_ms), io_timeout_(io_timeout) {}

StallProbe::~StallProbe() { stop(); }

Status StallProbe::start(Clock::time_point deadline) {
  stop();
  for (;;) {
    auto conn = RespConnection::connect(endpoint_, io_timeout_);
    if (conn) {
      stop_ = false;
      {
        std::lock_guard lock(mu_);
        window_ = StallWindow{};
        rtt_ns_.clear();
        window_start_ = Clock::now();
      }
      thread_ = std::thread(&StallProbe::run, this, std::move(conn.value()));
      return Status::ok();
    }
    if (Clock::now() >= deadline) return conn.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a retry pause, not a sync
  }
}

void StallProbe::run(RespConnection conn) {
  Clock::time_point next = Clock::now();
  while (!stop_) {
    Clock::time_point sent = Clock::now();
    auto reply = conn.call({"PING"});
    Clock::time_point got = Clock::now();
    {
      std::lock_guard lock(mu_);
      if (!reply || reply->is_error()) {
        window_.error = reply ? "PING replied " + reply->debug_string() : reply.status().to_string();
        return;
      }
      std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(got - sent).count();
      rtt_ns_.push_back(ns);
      double ms = static_cast<double>(ns) / 1e6;
      ++window_.pings;
      window_.max_ms = std::max(window_.max_ms, ms);
      if (ms > threshold_ms_) {
        window_.over.push_back(Stall{std::max(0.0, std::chrono::duration<double>(sent - window_start_).count()), ms});
      }
    }
    next += std::chrono::milliseconds(1);
    if (next < got) next = got;  // after a stall, do not burst to catch up
    std::this_thread::sleep_until(next);
  }
}

StallWindow StallProbe::take() {
  std::lock_guard lock(mu_);
  StallWindow w = std::move(window_);
  w.p99_ms = summarize_latencies(rtt_ns_).p99_us / 1000;
  window_ = StallWindow{};
  if (!w.error.empty()) window_.error = w.error;  // the probe stays ended
  rtt_ns_.clear();
  window_start_ = Clock::now();
  return w;
}

void StallProbe::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace leasehold::bench
