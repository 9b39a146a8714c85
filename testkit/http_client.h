// testkit/http_client.h: a minimal HTTP/1.1 client over a loopback
// socket, for tests of the operations listener (server/http/http_server.h). It
// sends raw bytes (so tests can send malformed requests too) and reads the
// response until the server closes the connection. The timeout is used as
// given (not scaled): callers scale upper bounds themselves.
//
// Errors: kIoError (cannot connect, send or read), kTimedOut (no complete
// response in time), kInternal (no parsable status line).
// Thread-safety: free functions, safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::testing {

struct HttpResult {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string header(std::string_view name) const;  // "" when absent
};

// Sends `raw` as is to 127.0.0.1:port and reads the whole response.
Result<HttpResult> http_exchange(std::uint16_t port, std::string_view raw,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));
// GET `target` ("/api/locks?limit=5").
Result<HttpResult> http_get(std::uint16_t port, std::string_view target,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace leasehold::testing
