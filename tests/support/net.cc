#include "tests/support/net.h"

#include "common/loopback.h"

namespace leasehold::testing {

std::uint16_t free_port() {
  auto port = net::pick_free_port();
  return port.is_ok() ? *port : 0;
}

bool wait_for_port(std::uint16_t port, std::chrono::milliseconds timeout) {
  return net::wait_until_accepting(port, timeout);
}

std::string loopback(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace leasehold::testing
