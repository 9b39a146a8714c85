// server/net/listener.cc: a listening TCP socket (server/net/listener.h).
#include "server/net/listener.h"

#include <fmt/format.h>

#include <array>

namespace leasehold::server {

Status Listener::open(uv_loop_t* loop, const std::string& host, std::uint16_t port, OnConnection on_connection) {
  sockaddr_storage addr{};
  int rc = 0;
  if (host.find(':') != std::string::npos) {
    rc = uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr));
  } else {
    rc = uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr));
  }
  if (rc != 0) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("bad listen address {}", host));
  }
  on_connection_ = std::move(on_connection);
  uv_tcp_init(loop, &handle_);
  handle_.data = this;
  initialised_ = true;  // closed at shutdown from here on
  rc = uv_tcp_bind(&handle_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&handle_), 511, [](uv_stream_t* s, int status) {
      static_cast<Listener*>(s->data)->on_connection_(s, status);
    });
  }
  if (rc != 0) {
    // Taken or not ours (in use, not a local address, a privileged port):
    // kUnavailable, like a data dir used by another server.
    return Status(ErrorCode::kUnavailable, fmt::format("cannot listen on {}:{}: {}", host, port, uv_strerror(rc)));
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(&handle_, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return Status::ok();
}

void Listener::close() {
  if (!initialised_) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&handle_), nullptr);
  initialised_ = false;
}

std::string peer_name(uv_tcp_t* tcp) {
  sockaddr_storage addr{};
  int len = sizeof(addr);
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  std::array<char, 64> ip{};
  int port = 0;
  if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uv_ip6_name(a6, ip.data(), ip.size());
    port = ntohs(a6->sin6_port);
    return fmt::format("[{}]:{}", ip.data(), port);
  }
  const auto* a4 = reinterpret_cast<const sockaddr_in*>(&addr);
  uv_ip4_name(a4, ip.data(), ip.size());
  port = ntohs(a4->sin_port);
  return fmt::format("{}:{}", ip.data(), port);
}

}  // namespace leasehold::server
