#include "client/parked_connection.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <utility>

#include "common/assert.h"

namespace leasehold::client::detail {
namespace {

// What a hang-up of the parked connection raises (epoll adds EPOLLHUP and
// EPOLLERR by itself); readable data alone (a late reply) is not one.
constexpr std::uint32_t kHangUp = EPOLLRDHUP | EPOLLHUP | EPOLLERR;

}  // namespace

ParkedConnection::ParkedConnection(int wake_fd) : wake_fd_(wake_fd) {
  if (wake_fd_ < 0) return;
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll.valid()) return;
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = wake_fd_;
  if (::epoll_ctl(epoll.get(), EPOLL_CTL_ADD, wake_fd_, &wake) == 0) epoll_fd_ = std::move(epoll);
}

ParkedConnection::~ParkedConnection() { release(); }

void ParkedConnection::park(std::unique_ptr<Connection> conn, Clock::time_point floor) {
  LEASEHOLD_ASSERT(usable() && empty() && conn != nullptr, "park needs an epoll fd and a free slot");
  epoll_event hang_up{};
  hang_up.events = kHangUp;
  hang_up.data.fd = conn->fd();
  // Cannot fail for a valid socket not yet in the set; if it did, hung_up()
  // would still see the hang-up, at the next look.
  (void)::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, conn->fd(), &hang_up);
  conn_ = std::move(conn);
  floor_ = floor;
}

bool ParkedConnection::hung_up() const {
  if (empty()) return false;
  pollfd p{conn_->fd(), POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void ParkedConnection::release() {
  if (empty()) return;
  (void)::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, conn_->fd(), nullptr);
  conn_.reset();
}

}  // namespace leasehold::client::detail
