// common/loopback.h: TCP ports on 127.0.0.1 for the private services that
// the demo and the tests start (servers, PostgreSQL, etcd, Redis).
// Thread-safety: free functions, safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>

#include "leasehold/status.h"

namespace leasehold::net {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it
// back, close). Another process may take it before the caller binds it;
// callers retry on a bind failure. Errors: kIoError.
Result<std::uint16_t> pick_free_port();

// True once a TCP connect to 127.0.0.1:port succeeds; false after `timeout`.
bool wait_until_accepting(std::uint16_t port, std::chrono::milliseconds timeout);

}  // namespace leasehold::net
