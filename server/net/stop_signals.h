// server/net/stop_signals.h: StopSignals, how a server is told to stop or
// reload: SIGINT and SIGTERM (stop), SIGHUP (reload the users), and
// request_stop() from any thread, each delivered on the loop thread.
//
// open() installs the handlers on the loop; close() must run before the
// loop is closed. `stop` gets the reason ("SIGINT", "SIGTERM", "stop
// requested") and may be called more than once.
//
// Errors: none. Ownership: owns the signal and async handles; it must stay
// in place until the loop ran their close.
// Thread-safety: request_stop() from any thread (it does nothing before
// open() or after close()); everything else on the loop thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <functional>

namespace leasehold::server {

class StopSignals {
 public:
  using OnStop = std::function<void(const char* why)>;
  using OnReload = std::function<void()>;

  StopSignals() = default;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  void open(uv_loop_t* loop, OnStop on_stop, OnReload on_reload);
  void request_stop();
  void close();

 private:
  uv_signal_t sigint_{};
  uv_signal_t sigterm_{};
  uv_signal_t sighup_{};
  uv_async_t stop_async_{};
  std::atomic<bool> open_{false};
  OnStop on_stop_;
  OnReload on_reload_;
};

}  // namespace leasehold::server
