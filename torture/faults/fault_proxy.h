// torture/faults/fault_proxy.h: a TCP proxy on 127.0.0.1 that the torture
// harness puts in front of a server (or an etcd member) to break the network
// between them at runtime (docs/faults.md).
//
// Every connection accepted on port() is forwarded to 127.0.0.1:target_port
// (a fresh upstream connection per client connection; if the upstream
// refuses, the client connection is closed). Faults apply per direction
// (kClientToServer: what the client sends; kServerToClient: the replies)
// and to every connection, current and future:
//   block(dir, kHold)  nothing moves that way; bytes wait (in the kernel and
//                      in the proxy) and flow again at heal, as TCP would
//                      retransmit them after a partition heals.
//   block(dir, kDrop)  bytes sent that way are read and thrown away. A TCP
//                      stream cannot skip bytes, so every connection that
//                      lost bytes is reset (RST both sides) at heal.
//   partition(mode)    block() both ways; connections accepted meanwhile get
//                      no upstream connection until heal (kHold) or are
//                      reset at once (kDrop). With reset_existing, current
//                      connections are reset (RST) first.
//   set_delay(dir, d)  each chunk read is delivered no earlier than d later.
//   set_rate(dir, b)   at most b bytes/s that way (0 = no cap).
//   heal()             every fault off (delays and rates too).
//   reset_connections() closes every current connection with RST.
// Order is kept within each direction of a connection.
//
// A Router, when given, chooses each accepted connection's upstream port
// from the connection's source port (the client's local port on
// 127.0.0.1); 0 means target_port. It runs on the proxy's thread, once per
// accepted connection, and must not call the proxy. Used to send each etcd
// peer's connections to a member through their own proxy
// (torture/etcd_peer_links.h).
//
// Errors: start() returns kIoError when the listening socket cannot be made
// (e.g. listen_port taken). Runtime socket errors only close the connection
// they hit.
// Thread-safety: every method may be called from any thread while the
// proxy's own thread forwards; a change applies to bytes read after it
// returns. The destructor stops the thread and closes every socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "leasehold/status.h"

namespace leasehold::torture {

enum class Direction : std::uint8_t { kClientToServer, kServerToClient };
enum class BlockMode : std::uint8_t { kHold, kDrop };

struct FaultProxyStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_open = 0;
  std::uint64_t connections_reset = 0;          // by reset_connections, partition or lost bytes
  std::uint64_t bytes_forwarded[2] = {0, 0};    // indexed by Direction
  std::uint64_t bytes_dropped[2] = {0, 0};
};

using Router = std::function<std::uint16_t(std::uint16_t source_port)>;

class FaultProxy {
 public:
  // Listens on 127.0.0.1:listen_port (0: a free port) and forwards to
  // 127.0.0.1:target_port (or where `router` says).
  static Result<std::unique_ptr<FaultProxy>> start(std::uint16_t target_port, std::uint16_t listen_port = 0,
                                                   Router router = {});
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  std::uint16_t port() const;
  std::uint16_t target_port() const;

  void partition(BlockMode mode = BlockMode::kHold, bool reset_existing = false);
  void block(Direction direction, BlockMode mode = BlockMode::kDrop);
  void set_delay(Direction direction, std::chrono::milliseconds delay);
  void set_rate(Direction direction, std::uint64_t bytes_per_second);
  void heal();
  void reset_connections();
  FaultProxyStats stats() const;

  struct Impl;

 private:
  explicit FaultProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::torture
