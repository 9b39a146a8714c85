// server/net/connection_registry.h: ConnectionRegistry, the server's client
// connections by id, from accept until libuv closed their handle
// (ConnectionHost::forget_connection), and the gate that holds new ones
// unread until the server serves (after an unclean stop, until the start's
// Reopen is applied: no reply may show the state from before it).
//
// Ids come from next_id(): 1, 2, ... and are never reused, so an id of a
// closed connection simply stops matching.
//
// Errors: none. Ownership: shares ownership of each connection with libuv's
// callbacks; find() returns a borrowed pointer, valid until the connection
// is forgotten. Thread-safety: loop thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/net/connection.h"

namespace leasehold::server {

class ConnectionRegistry {
 public:
  std::uint64_t next_id() { return next_id_++; }
  void add(std::shared_ptr<Connection> conn);
  void forget(std::uint64_t id) { connections_.erase(id); }
  // The connection with `id`, or nullptr once it was forgotten.
  Connection* find(std::uint64_t id) const;
  bool contains(std::uint64_t id) const { return connections_.contains(id); }
  std::size_t size() const { return connections_.size(); }
  // Connections blocked on a request (Connection::blocked()).
  std::size_t blocked_count() const;
  // Every connection now (closing one may close or forget others).
  std::vector<std::shared_ptr<Connection>> all() const;
  // Connections idle longer than `timeout` at `now` (Connection::idle_expired).
  std::vector<std::shared_ptr<Connection>> idle_expired(std::chrono::steady_clock::time_point now,
                                                        std::chrono::milliseconds timeout) const;
  // Drops every reference (the server is being destroyed).
  void clear() { connections_.clear(); }

  // Until start_serving(), accepted connections are held unread.
  bool serving() const { return serving_; }
  // Holds connection `id` (peer `peer`) until start_serving().
  void hold_unread(std::uint64_t id, std::string peer) { unread_.emplace_back(id, std::move(peer)); }
  const std::string& last_held_peer() const { return unread_.back().second; }
  // Serves from now on; returns the held connections (id, peer), in accept order.
  std::vector<std::pair<std::uint64_t, std::string>> start_serving();

 private:
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::shared_ptr<Connection>> connections_;
  bool serving_ = false;
  std::vector<std::pair<std::uint64_t, std::string>> unread_;
};

}  // namespace leasehold::server
