// tests/support/net.h: loopback ports for tests.
//
// free_port() asks the kernel for an unused TCP port on 127.0.0.1 (bind to
// port 0, read it back, close). There is a small window in which another
// process could take it; tests that start servers retry on a bind failure.
// Thread-safety: free functions, safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace leasehold::testing {

std::uint16_t free_port();
// True once a TCP connect to 127.0.0.1:port succeeds, false after `timeout`.
bool wait_for_port(std::uint16_t port, std::chrono::milliseconds timeout);
// "127.0.0.1:<port>"
std::string loopback(std::uint16_t port);

}  // namespace leasehold::testing
