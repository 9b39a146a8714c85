// server/net/connection_registry.cc: the server's connections by id
// (server/net/connection_registry.h).
#include "server/net/connection_registry.h"

namespace leasehold::server {

void ConnectionRegistry::add(std::shared_ptr<Connection> conn) {
  const std::uint64_t id = conn->id();
  connections_.emplace(id, std::move(conn));
}

Connection* ConnectionRegistry::find(std::uint64_t id) const {
  const auto it = connections_.find(id);
  return it == connections_.end() ? nullptr : it->second.get();
}

std::size_t ConnectionRegistry::blocked_count() const {
  std::size_t n = 0;
  for (const auto& [id, c] : connections_) n += c->blocked() ? 1 : 0;
  return n;
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::all() const {
  std::vector<std::shared_ptr<Connection>> all;
  all.reserve(connections_.size());
  for (const auto& [id, c] : connections_) all.push_back(c);
  return all;
}

std::vector<std::shared_ptr<Connection>> ConnectionRegistry::idle_expired(std::chrono::steady_clock::time_point now,
                                                                          std::chrono::milliseconds timeout) const {
  std::vector<std::shared_ptr<Connection>> expired;
  for (const auto& [id, c] : connections_) {
    if (c->idle_expired(now, timeout)) expired.push_back(c);
  }
  return expired;
}

std::vector<std::pair<std::uint64_t, std::string>> ConnectionRegistry::start_serving() {
  serving_ = true;
  std::vector<std::pair<std::uint64_t, std::string>> held = std::move(unread_);
  unread_.clear();
  return held;
}

}  // namespace leasehold::server
