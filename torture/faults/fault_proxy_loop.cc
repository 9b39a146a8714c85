// torture/faults/fault_proxy_loop.cc: the proxy's forwarding thread, one
// poll() loop over every socket (fault_proxy.h states the behaviour).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <vector>

#include "torture/faults/fault_proxy_impl.h"

namespace leasehold::torture {
namespace {

constexpr std::size_t kMaxQueued = 4u << 20;  // per direction; reading pauses above it
constexpr auto kIdleWake = std::chrono::milliseconds(200);

bool dropping(const LinkConfig& l) { return l.blocked && l.mode == BlockMode::kDrop; }

}  // namespace

FaultProxy::Impl::~Impl() {
  for (Conn& c : conns) close_conn(c);
  if (listen_fd >= 0) ::close(listen_fd);
  if (wake_fd >= 0) ::close(wake_fd);
}

void FaultProxy::Impl::add_stat(std::uint64_t FaultProxyStats::*field, std::uint64_t n) {
  std::lock_guard lock(mu);
  stats.*field += n;
}

void FaultProxy::Impl::add_bytes(std::uint64_t (FaultProxyStats::*field)[2], int d, std::uint64_t n) {
  std::lock_guard lock(mu);
  (stats.*field)[d] += n;
}

void FaultProxy::Impl::close_conn(Conn& c) {
  for (int& fd : c.fd) {
    if (fd < 0) continue;
    if (c.reset) {
      const linger lg{1, 0};  // close with RST
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    ::close(fd);
    fd = -1;
  }
  std::lock_guard lock(mu);
  --stats.connections_open;
  if (c.reset) ++stats.connections_reset;
}

bool FaultProxy::Impl::connect_upstream(Conn& c) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const timeval tv{1, 0};  // bounds connect() when the backlog is full
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(c.upstream_port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return false;
  }
  const timeval none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  c.fd[1] = fd;
  return true;
}

void FaultProxy::Impl::accept_new(const ProxyConfig& cfg) {
  for (;;) {
    sockaddr_in source{};
    socklen_t source_len = sizeof source;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&source), &source_len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    Conn& c = conns.emplace_back();
    c.fd[0] = fd;
    c.upstream_port = router ? router(ntohs(source.sin_port)) : 0;
    if (c.upstream_port == 0) c.upstream_port = target_port;
    {
      std::lock_guard lock(mu);
      ++stats.connections_accepted;
      ++stats.connections_open;
    }
    if (cfg.partitioned) {
      if (dropping(cfg.link[0])) c.reset = c.dead = true;  // else: pending until heal
    } else if (!connect_upstream(c)) {
      c.dead = true;
    }
  }
}

void FaultProxy::Impl::read_side(Conn& c, int d, const ProxyConfig& cfg, ProxyClock::time_point now) {
  Pipe& p = c.pipe[d];
  const LinkConfig& link = cfg.link[d];
  char buf[64 * 1024];
  const ssize_t n = ::recv(c.fd[d], buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0) {
    if (dropping(link)) {
      p.lost = true;
      add_bytes(&FaultProxyStats::bytes_dropped, d, static_cast<std::uint64_t>(n));
    } else {
      p.queue.push_back(Pipe::Chunk{now + link.delay, std::string(buf, static_cast<std::size_t>(n)), 0});
      p.queued += static_cast<std::size_t>(n);
    }
  } else if (n == 0) {
    p.read_eof = true;
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    c.reset = c.dead = true;
  }
}

void FaultProxy::Impl::write_side(Conn& c, int d, const LinkConfig& link, ProxyClock::time_point now,
                                  ProxyClock::time_point& wake) {
  Pipe& p = c.pipe[d];
  const double rate = static_cast<double>(link.rate);
  if (link.rate != 0) {
    const double elapsed = std::chrono::duration<double>(now - p.refilled).count();
    p.tokens = std::min(p.tokens + elapsed * rate, std::max(rate / 10.0, 1.0));
  }
  p.refilled = now;
  while (!p.queue.empty()) {
    Pipe::Chunk& ch = p.queue.front();
    if (ch.due > now) {
      wake = std::min(wake, ch.due);
      return;
    }
    std::size_t len = ch.bytes.size() - ch.offset;
    if (link.rate != 0) {
      const auto allowed = static_cast<std::size_t>(p.tokens);
      if (allowed == 0) {
        const double wait_s = (1.0 - p.tokens) / rate;
        wake = std::min(wake, now + std::chrono::microseconds(static_cast<std::int64_t>(std::ceil(wait_s * 1e6))));
        return;
      }
      len = std::min(len, allowed);
    }
    const ssize_t n = ::send(c.fd[1 - d], ch.bytes.data() + ch.offset, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        p.want_write = true;
      } else {
        c.reset = c.dead = true;
      }
      return;
    }
    add_bytes(&FaultProxyStats::bytes_forwarded, d, static_cast<std::uint64_t>(n));
    ch.offset += static_cast<std::size_t>(n);
    p.queued -= static_cast<std::size_t>(n);
    if (link.rate != 0) p.tokens -= static_cast<double>(n);
    if (ch.offset == ch.bytes.size()) p.queue.pop_front();
  }
}

void FaultProxy::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<std::pair<Conn*, int>> owners;  // per pollfd after the first two: (conn, fd index)
  for (;;) {
    ProxyConfig cfg;
    {
      std::lock_guard lock(mu);
      if (stop) return;
      cfg = config;
    }
    auto now = ProxyClock::now();
    if (cfg.reset_epoch != seen_reset_epoch) {
      seen_reset_epoch = cfg.reset_epoch;
      for (Conn& c : conns) c.reset = c.dead = true;
    }
    ProxyClock::time_point wake = now + kIdleWake;
    for (Conn& c : conns) {
      if (c.dead) continue;
      if (c.fd[1] < 0) {  // accepted during a partition
        if (cfg.partitioned) {
          if (dropping(cfg.link[0])) c.reset = c.dead = true;
          continue;
        }
        if (!connect_upstream(c)) {
          c.dead = true;
          continue;
        }
      }
      for (int d = 0; d < 2 && !c.dead; ++d) {
        const LinkConfig& link = cfg.link[d];
        Pipe& p = c.pipe[d];
        if (dropping(link) && p.queued != 0) {  // bytes in flight are lost too
          add_bytes(&FaultProxyStats::bytes_dropped, d, p.queued);
          p.queue.clear();
          p.queued = 0;
          p.lost = true;
        }
        if (!link.blocked && p.lost) {  // the stream has a hole: reset it
          c.reset = c.dead = true;
          break;
        }
        if (link.blocked) continue;
        write_side(c, d, link, now, wake);
        if (!c.dead && p.read_eof && p.queued == 0 && !p.shut) {
          ::shutdown(c.fd[1 - d], SHUT_WR);
          p.shut = true;
        }
      }
      if (c.pipe[0].shut && c.pipe[1].shut) c.dead = true;
    }
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->dead) {
        close_conn(*it);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }

    fds.assign({pollfd{listen_fd, POLLIN, 0}, pollfd{wake_fd, POLLIN, 0}});
    owners.clear();
    for (Conn& c : conns) {
      for (int i = 0; i < 2; ++i) {
        if (c.fd[i] < 0) continue;
        short events = 0;
        const Pipe& in = c.pipe[i];       // read from fd i
        const Pipe& out = c.pipe[1 - i];  // written to fd i
        const LinkConfig& in_link = cfg.link[i];
        if (!in.read_eof && in.queued < kMaxQueued && (!in_link.blocked || dropping(in_link))) events |= POLLIN;
        if (out.want_write && !cfg.link[1 - i].blocked) events |= POLLOUT;
        fds.push_back(pollfd{c.fd[i], events, 0});
        owners.emplace_back(&c, i);
      }
    }
    const auto timeout = std::chrono::ceil<std::chrono::milliseconds>(std::max(wake - now, ProxyClock::duration(0)));
    if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) < 0 && errno != EINTR) return;
    {
      // Bytes and connections that arrived during poll() obey the config of
      // now: a change made before they were sent must apply to them.
      std::lock_guard lock(mu);
      if (stop) return;
      cfg = config;
    }
    now = ProxyClock::now();
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t drained = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd, &drained, sizeof drained);
    }
    if ((fds[0].revents & POLLIN) != 0) accept_new(cfg);
    for (std::size_t k = 2; k < fds.size(); ++k) {
      const short re = fds[k].revents;
      auto [c, i] = owners[k - 2];
      if (re == 0 || c->dead) continue;
      if ((re & POLLIN) != 0) read_side(*c, i, cfg, now);
      if ((re & POLLOUT) != 0) c->pipe[1 - i].want_write = false;
      if ((re & POLLERR) != 0 || ((re & POLLHUP) != 0 && (re & POLLIN) == 0)) c->reset = c->dead = true;
    }
  }
}

}  // namespace leasehold::torture
