// server/net/precise_timer.cc: timerfd + uv_poll (see the header).
#include "server/net/precise_timer.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace leasehold::server {

Status PreciseTimer::open(uv_loop_t* loop, std::function<void()> on_fire) {
  fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd_ < 0) return Status(ErrorCode::kIoError, std::string("timerfd_create: ") + std::strerror(errno));
  if (int rc = uv_poll_init(loop, &poll_, fd_); rc != 0) {
    ::close(fd_);
    fd_ = -1;
    return Status(ErrorCode::kIoError, std::string("uv_poll_init: ") + uv_strerror(rc));
  }
  poll_.data = this;
  open_ = true;
  on_fire_ = std::move(on_fire);
  uv_poll_start(&poll_, UV_READABLE, &PreciseTimer::on_readable);
  return Status::ok();
}

void PreciseTimer::arm(std::chrono::nanoseconds delay) {
  if (!open_) return;
  // it_value 0 would disarm, so a due deadline gets the earliest expiry:
  // 1 us, not 1 ns, because an interposed clock (libfaketime's rate mode,
  // the torture suite's rate:X clock) scales a relative value by 1/rate and
  // 1 ns x 1/1.005 truncates to 0: the timer never fired again.
  constexpr std::int64_t kEarliestNs = 1'000;
  const std::int64_t ns = std::max<std::int64_t>(delay.count(), kEarliestNs);
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  ::timerfd_settime(fd_, 0, &spec, nullptr);
  armed_ = true;
}

void PreciseTimer::disarm() {
  if (!open_ || !armed_) return;
  itimerspec spec{};
  ::timerfd_settime(fd_, 0, &spec, nullptr);
  armed_ = false;
}

void PreciseTimer::close() {
  if (!open_) return;
  open_ = false;
  disarm();
  uv_poll_stop(&poll_);
  uv_close(reinterpret_cast<uv_handle_t*>(&poll_), [](uv_handle_t* h) {
    auto* self = static_cast<PreciseTimer*>(h->data);
    if (self->fd_ >= 0) ::close(self->fd_);
    self->fd_ = -1;
  });
}

void PreciseTimer::on_readable(uv_poll_t* handle, int status, int /*events*/) {
  auto* self = static_cast<PreciseTimer*>(handle->data);
  if (status < 0 || !self->open_) return;
  std::uint64_t expirations = 0;
  if (::read(self->fd_, &expirations, sizeof expirations) != static_cast<ssize_t>(sizeof expirations)) return;
  self->armed_ = false;
  if (self->on_fire_) self->on_fire_();
}

}  // namespace leasehold::server
