// bench/capacity/stall_probe.h: event-loop stalls seen from a client.
//
// A StallProbe owns one connection and a thread that sends PING once per
// millisecond (unpipelined) and records each round trip. The longest round
// trip of a window is the longest time the server's loop did not get to a
// ready client (plus this machine's scheduling noise: compare with a window
// on an idle server). Windows are read and reset with take().
//
// Errors: a failed PING (socket error, timeout) ends the probe; take()
// reports it in Window::error and reconnect() starts over.
// Thread-safety: start/take/stop from one controlling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/load/resp_connection.h"

namespace leasehold::bench {

struct Stall {
  double at_s = 0;   // seconds since the window began (when the PING was sent)
  double ms = 0;     // its round trip
};

struct StallWindow {
  std::uint64_t pings = 0;
  double max_ms = 0;             // the longest round trip
  double p99_ms = 0;
  std::vector<Stall> over;       // every round trip above the threshold, in order
  std::string error;             // "" when the probe ran throughout
};

class StallProbe {
 public:
  // `threshold_ms`: round trips above it are listed in StallWindow::over.
  StallProbe(Endpoint endpoint, double threshold_ms, std::chrono::milliseconds io_timeout);
  ~StallProbe();
  StallProbe(const StallProbe&) = delete;
  StallProbe& operator=(const StallProbe&) = delete;

  // Connects (retrying until `deadline`) and starts pinging; a new window begins.
  Status start(std::chrono::steady_clock::time_point deadline);
  // The window since start() or the last take(); a new one begins.
  StallWindow take();
  // Stops pinging and closes the connection (also done by the destructor).
  void stop();

 private:
  void run(RespConnection conn);

  Endpoint endpoint_;
  double threshold_ms_;
  std::chrono::milliseconds io_timeout_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;  // guards the window below
  std::chrono::steady_clock::time_point window_start_;
  std::vector<std::int64_t> rtt_ns_;
  StallWindow window_;
};

}  // namespace leasehold::bench
