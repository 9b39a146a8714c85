#include "testkit/net.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <mutex>
#include <random>
#include <string>

#include "common/loopback.h"

namespace leasehold::testing {
namespace {

constexpr const char* kReservationDir = "/tmp/leasehold-test-ports";

// The ports handed out: below the kernel's ephemeral range, where no
// outgoing connection takes a local port, and at least 1024 wide.
struct PortRange {
  int first = 0;
  int last = 0;
};
PortRange reservable_range() {
  int low = 32768;
  int high = 60999;
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  in >> low >> high;
  if (!in || low < 4096) return {};
  return {low / 2, low - 1};
}

// True if 127.0.0.1:port can be bound now (as a server would, with
// SO_REUSEADDR, so a port in TIME_WAIT counts as free).
bool bindable(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Takes the machine-wide reservation of `port` for the rest of this
// process (the lock dies with it); false if any process holds it, this one
// included (an flock belongs to its open file, not to the process).
bool reserve(std::uint16_t port) {
  const std::string path = std::string(kReservationDir) + "/" + std::to_string(port);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  return true;  // fd stays open (and locked) until the process exits
}

}  // namespace

std::uint16_t free_port() {
  static const PortRange range = reservable_range();
  static std::mutex mu;
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  std::lock_guard lock(mu);
  if (range.last - range.first >= 1024 && (::mkdir(kReservationDir, 01777) == 0 || errno == EEXIST)) {
    std::uniform_int_distribution<int> pick(range.first, range.last);
    for (int attempt = 0; attempt < 2000; ++attempt) {
      const auto port = static_cast<std::uint16_t>(pick(rng));
      // Reserved first, then checked: a port someone else binds stays
      // reserved (so it is not picked again) and is skipped.
      if (reserve(port) && bindable(port)) return port;
    }
  }
  // No reservable range (an unusual ip_local_port_range): the kernel's pick.
  auto port = net::pick_free_port();
  return port.is_ok() ? *port : 0;
}

bool wait_for_port(std::uint16_t port, std::chrono::milliseconds timeout) {
  return net::wait_until_accepting(port, timeout);
}

std::string loopback(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace leasehold::testing
