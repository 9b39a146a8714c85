// torture/faults/fault_proxy_impl.h: the proxy's state, shared by
// fault_proxy.cc (public methods) and fault_proxy_loop.cc (the forwarding
// thread). Internal to the proxy.
//
// Thread-safety: `config`, `stop` and `stats` are guarded by `mu`; the rest
// belongs to the forwarding thread (run()) once it started.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "torture/faults/fault_proxy.h"

namespace leasehold::torture {

using ProxyClock = std::chrono::steady_clock;

struct LinkConfig {
  bool blocked = false;
  BlockMode mode = BlockMode::kHold;
  std::chrono::milliseconds delay{0};
  std::uint64_t rate = 0;  // bytes per second, 0 = no cap
};

struct ProxyConfig {
  LinkConfig link[2];        // indexed by Direction
  bool partitioned = false;  // new connections wait (kHold) or are reset (kDrop)
  std::uint64_t reset_epoch = 0;
};

// One direction of one connection: reads fd[d], writes fd[1 - d].
struct Pipe {
  struct Chunk {
    ProxyClock::time_point due;
    std::string bytes;
    std::size_t offset = 0;
  };
  std::deque<Chunk> queue;
  std::size_t queued = 0;    // unsent bytes in `queue`
  bool read_eof = false;     // the source closed its side
  bool shut = false;         // we shut down the destination's write side
  bool lost = false;         // bytes were dropped: reset at heal
  bool want_write = false;   // the last write would block
  double tokens = 0;         // rate limit bucket
  ProxyClock::time_point refilled{};
};

struct Conn {
  int fd[2] = {-1, -1};  // [0] the client, [1] the upstream (-1 while pending)
  std::uint16_t upstream_port = 0;
  Pipe pipe[2];          // indexed by Direction
  bool dead = false;
  bool reset = false;    // close with RST
};

struct FaultProxy::Impl {
  ~Impl();
  void run();
  void change(const std::function<void(ProxyConfig&)>& edit, bool stop_now = false);

  // Forwarding thread only.
  void accept_new(const ProxyConfig& cfg);
  bool connect_upstream(Conn& c);
  void read_side(Conn& c, int d, const ProxyConfig& cfg, ProxyClock::time_point now);
  void write_side(Conn& c, int d, const LinkConfig& link, ProxyClock::time_point now,
                  ProxyClock::time_point& wake);
  void close_conn(Conn& c);
  void add_stat(std::uint64_t FaultProxyStats::*field, std::uint64_t n);
  void add_bytes(std::uint64_t (FaultProxyStats::*field)[2], int d, std::uint64_t n);

  std::uint16_t port = 0;
  std::uint16_t target_port = 0;
  Router router;  // may be empty
  int listen_fd = -1;
  int wake_fd = -1;
  std::thread thread;
  std::list<Conn> conns;
  std::uint64_t seen_reset_epoch = 0;

  std::mutex mu;
  ProxyConfig config;
  bool stop = false;
  FaultProxyStats stats;
};

}  // namespace leasehold::torture
