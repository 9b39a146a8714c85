// A program built against an installed leasehold (tests/package): opens a
// session on the server named by argv[1], takes a lock, admits its fencing
// token at an in-memory fence gate and checks that a lower token is refused.
// Prints "token N" and exits 0; any failure prints why and exits non-zero.
#include <iostream>

#include "leasehold/client.h"
#include "leasehold/fence.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"

using namespace std::chrono_literals;
namespace lh = leasehold::client;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer host:port\n";
    return 64;
  }
  auto endpoints = lh::parse_endpoints(argv[1]);
  if (!endpoints) {
    std::cerr << endpoints.status().to_string() << "\n";
    return 64;
  }
  lh::ClientOptions options;
  options.endpoints = *endpoints;
  auto client = lh::Client::create(options);
  if (!client) {
    std::cerr << client.status().to_string() << "\n";
    return 1;
  }
  lh::SessionOptions session_options;
  session_options.ttl = 60s;
  session_options.owner = "package-consumer";
  auto session = lh::Session::open(*client, session_options);
  if (!session) {
    std::cerr << "session: " << session.status().to_string() << "\n";
    return 1;
  }
  auto guard = lh::LockGuard::acquire(**session, "package/consumer", 30s);
  if (!guard) {
    std::cerr << "acquire: " << guard.status().to_string() << "\n";
    return 1;
  }
  const leasehold::fence::Token token = guard->token();
  leasehold::fence::InMemoryFenceGate gate;
  auto current = gate.admit("package/consumer", token);
  auto stale = gate.admit("package/consumer", token - 1);
  if (!current || !current->admitted || !stale || stale->admitted) {
    std::cerr << "the fence gate did not admit " << token << " and refuse " << token - 1 << "\n";
    return 1;
  }
  std::cout << "token " << token << "\n";
  return guard->release().is_ok() ? 0 : 1;
}
