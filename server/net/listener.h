// server/net/listener.h: Listener, one listening TCP socket on the loop (the
// plain or the TLS client listener), and peer_name(), the "ip:port" of an
// accepted connection for the logs.
//
// open() binds and listens; each incoming connection (or accept error) calls
// `on_connection` with the listening stream, on the loop thread. Once open()
// initialised the handle (even when binding then failed), close() must run
// before the loop is closed; it is idempotent.
//
// Errors: open(): kInvalidArgument "bad listen address <host>" (not an IP
// literal), kUnavailable "cannot listen on <host>:<port>: <reason>" (taken
// or not ours: in use, not a local address, a privileged port).
// Ownership: owns the handle; the Listener must stay in place (its address
// is the handle's data) until the loop ran the close.
// Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "leasehold/status.h"

namespace leasehold::server {

class Listener {
 public:
  using OnConnection = std::function<void(uv_stream_t* listener, int status)>;

  Listener() = default;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  Status open(uv_loop_t* loop, const std::string& host, std::uint16_t port, OnConnection on_connection);
  void close();
  // The bound port (the kernel's choice for port 0); 0 before open().
  std::uint16_t port() const { return bound_port_; }
  bool is(const uv_stream_t* stream) const { return stream == reinterpret_cast<const uv_stream_t*>(&handle_); }

 private:
  uv_tcp_t handle_{};
  bool initialised_ = false;  // closed by close() from then on
  std::uint16_t bound_port_ = 0;
  OnConnection on_connection_;
};

// The peer address of an accepted connection, "ip:port" or "[ip6]:port";
// "?" when the socket cannot say.
std::string peer_name(uv_tcp_t* tcp);

}  // namespace leasehold::server
