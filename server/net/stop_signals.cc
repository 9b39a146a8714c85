// server/net/stop_signals.cc: stop and reload signals (server/net/stop_signals.h).
#include "server/net/stop_signals.h"

#include <csignal>

namespace leasehold::server {

void StopSignals::open(uv_loop_t* loop, OnStop on_stop, OnReload on_reload) {
  on_stop_ = std::move(on_stop);
  on_reload_ = std::move(on_reload);
  uv_signal_init(loop, &sigint_);
  sigint_.data = this;
  uv_signal_init(loop, &sigterm_);
  sigterm_.data = this;
  uv_signal_init(loop, &sighup_);
  sighup_.data = this;
  uv_async_init(loop, &stop_async_, [](uv_async_t* h) { static_cast<StopSignals*>(h->data)->on_stop_("stop requested"); });
  stop_async_.data = this;
  uv_signal_start(&sigint_, [](uv_signal_t* h, int) { static_cast<StopSignals*>(h->data)->on_stop_("SIGINT"); },
                  SIGINT);
  uv_signal_start(&sigterm_, [](uv_signal_t* h, int) { static_cast<StopSignals*>(h->data)->on_stop_("SIGTERM"); },
                  SIGTERM);
  uv_signal_start(&sighup_, [](uv_signal_t* h, int) { static_cast<StopSignals*>(h->data)->on_reload_(); }, SIGHUP);
  open_ = true;
}

void StopSignals::request_stop() {
  if (open_) uv_async_send(&stop_async_);
}

void StopSignals::close() {
  if (!open_.exchange(false)) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&sigint_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sigterm_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sighup_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&stop_async_), nullptr);
}

}  // namespace leasehold::server
