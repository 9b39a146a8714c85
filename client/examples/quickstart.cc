// quickstart: open a session, take a lock, do fenced work, react to loss.
// Usage: leasehold_client_quickstart [host:port]
#include <iostream>

#include "leasehold/client.h"
#include "leasehold/lock_guard.h"
#include "leasehold/session.h"

using namespace std::chrono_literals;
namespace lh = leasehold::client;

int main(int argc, char** argv) {
  auto endpoints = lh::parse_endpoints(argc > 1 ? argv[1] : "127.0.0.1:7379");
  if (!endpoints) {
    std::cerr << endpoints.status().to_string() << "\n";
    return 64;
  }
  lh::ClientOptions options;
  options.endpoints = *endpoints;
  auto client = lh::Client::create(options);
  if (!client) return 64;

  lh::SessionOptions session_options;
  session_options.ttl = 5s;  // a dead holder's lock frees after about this long
  session_options.owner = "quickstart";
  session_options.on_lost = [](const leasehold::Status& why) {
    std::cerr << "session lost: " << why.to_string() << "\n";
  };
  auto session = lh::Session::open(*client, session_options);
  if (!session) {
    std::cerr << "cannot open a session: " << session.status().to_string() << "\n";
    return 69;
  }

  auto guard = lh::LockGuard::acquire(**session, "reports/daily", 10s);
  if (!guard) {
    std::cerr << "not acquired: " << guard.status().to_string() << "\n";
    return 75;
  }
  std::cout << "holding " << guard->name() << " with token " << guard->token() << "\n";

  // Work in steps; stop as soon as the lease is in doubt.
  for (int step = 0; step < 3 && !guard->stop_token().stop_requested(); ++step) {
    // Fenced write: refused (kStaleToken) once someone newer holds the lock.
    auto put = guard->put("reports/daily/cursor", std::to_string(step));
    if (!put) {
      std::cerr << "fenced write refused: " << put.status().to_string() << "\n";
      return 76;
    }
  }
  if (!guard->valid()) {
    std::cerr << "lost the lock: " << guard->status().to_string() << "\n";
    return 76;
  }
  return guard->release().is_ok() ? 0 : 1;  // also released by ~LockGuard
}
