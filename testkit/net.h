// testkit/net.h: loopback ports for tests.
//
// free_port() returns a TCP port on 127.0.0.1 that can be bound now and
// that no other test process will be handed while this one lives: it is
// picked below the kernel's ephemeral range (so no outgoing connection
// takes it as its local port) and reserved machine-wide with an flock on
// /tmp/leasehold-test-ports/<port>, held until the process exits, and
// never handed out twice by one process. Without that, a port freed by a
// test that killed its etcd member could be given to another test's new
// etcd, and the first test's servers, still dialling it, joined the wrong
// cluster (seen under ctest -j: a fresh cluster saw a stranger's log entry
// 391, and writes timed out against a stranger's member). A process that
// does not use this function (a system service) can still take a port
// between the check and the bind; tests that start servers retry on a bind
// failure. Falls back to the kernel's pick (bind to port 0) if the
// ephemeral range leaves no room below it.
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
