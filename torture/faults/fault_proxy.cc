// torture/faults/fault_proxy.cc: the proxy's public methods; the forwarding
// loop is in fault_proxy_loop.cc.
#include "torture/faults/fault_proxy.h"

#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "torture/faults/fault_proxy_impl.h"

namespace leasehold::torture {

Result<std::unique_ptr<FaultProxy>> FaultProxy::start(std::uint16_t target_port, std::uint16_t listen_port,
                                                      Router router) {
  auto impl = std::make_unique<Impl>();
  impl->target_port = target_port;
  impl->router = std::move(router);
  impl->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (impl->listen_fd < 0) return Status(ErrorCode::kIoError, std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(impl->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(listen_port);
  if (::bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(impl->listen_fd, 128) != 0) {
    return Status(ErrorCode::kIoError,
                  "listen on 127.0.0.1:" + std::to_string(listen_port) + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  ::getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl->port = ntohs(addr.sin_port);
  impl->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl->wake_fd < 0) return Status(ErrorCode::kIoError, std::string("eventfd: ") + std::strerror(errno));
  impl->thread = std::thread([p = impl.get()] { p->run(); });
  return std::unique_ptr<FaultProxy>(new FaultProxy(std::move(impl)));
}

FaultProxy::FaultProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FaultProxy::~FaultProxy() {
  impl_->change([](ProxyConfig&) {}, /*stop=*/true);
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::uint16_t FaultProxy::port() const { return impl_->port; }
std::uint16_t FaultProxy::target_port() const { return impl_->target_port; }

void FaultProxy::partition(BlockMode mode, bool reset_existing) {
  impl_->change([&](ProxyConfig& c) {
    for (LinkConfig& l : c.link) {
      l.blocked = true;
      l.mode = mode;
    }
    c.partitioned = true;
    if (reset_existing) ++c.reset_epoch;
  });
}

void FaultProxy::block(Direction direction, BlockMode mode) {
  impl_->change([&](ProxyConfig& c) {
    LinkConfig& l = c.link[static_cast<int>(direction)];
    l.blocked = true;
    l.mode = mode;
  });
}

void FaultProxy::set_delay(Direction direction, std::chrono::milliseconds delay) {
  impl_->change([&](ProxyConfig& c) { c.link[static_cast<int>(direction)].delay = delay; });
}

void FaultProxy::set_rate(Direction direction, std::uint64_t bytes_per_second) {
  impl_->change([&](ProxyConfig& c) { c.link[static_cast<int>(direction)].rate = bytes_per_second; });
}

void FaultProxy::heal() {
  impl_->change([](ProxyConfig& c) {
    for (LinkConfig& l : c.link) l = LinkConfig{};
    c.partitioned = false;
  });
}

void FaultProxy::reset_connections() {
  impl_->change([](ProxyConfig& c) { ++c.reset_epoch; });
}

FaultProxyStats FaultProxy::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

void FaultProxy::Impl::change(const std::function<void(ProxyConfig&)>& edit, bool stop_now) {
  {
    std::lock_guard lock(mu);
    edit(config);
    if (stop_now) stop = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
}

}  // namespace leasehold::torture
