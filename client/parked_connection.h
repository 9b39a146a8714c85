// client/parked_connection.h: the connection an ONCLOSE session was bound
// to, kept open after a call on it timed out (internal).
//
// Silence is not a close (docs/protocol.md, ONCLOSE): the server ends an
// ONCLOSE session one close grace after the client's side closes its bound
// connection, so the keepalive thread must not close that connection
// because a reply is late. It parks it here instead, dials a new connection
// and binds the session there (SESSION.KEEPALIVE id BIND); only once that
// BIND is acknowledged is the parked connection closed (release()), since
// the server no longer counts its close. Nothing is sent on a parked
// connection and its late reply is left unread. Only a real error counts:
// hung_up() (the peer's FIN or RST, a socket error), after which the server
// may end the session one grace after floor().
//
// interrupt_fd() is readable when `wake_fd` is or when the parked
// connection hangs up, so a wait passed it (instead of `wake_fd`) also
// watches the parked connection.
//
// Ownership: owns the parked connection and an epoll fd.
// Thread-safety: none (the session's keepalive thread).
#pragma once

#include <memory>

#include "client/connection.h"
#include "common/unique_fd.h"

namespace leasehold::client::detail {

class ParkedConnection {
 public:
  explicit ParkedConnection(int wake_fd);
  ~ParkedConnection();
  ParkedConnection(const ParkedConnection&) = delete;
  ParkedConnection& operator=(const ParkedConnection&) = delete;

  // False when the epoll fd could not be made (or wake_fd is -1): then
  // nothing can be parked.
  bool usable() const { return epoll_fd_.valid(); }
  bool empty() const { return conn_ == nullptr; }
  // Requires usable() and empty(). `floor`: the send time of the latest
  // request answered on `conn` (or of the one that bound it).
  void park(std::unique_ptr<Connection> conn, Clock::time_point floor);
  Clock::time_point floor() const { return floor_; }
  // True when a connection is parked and its peer closed or reset it, or
  // its socket has an error. Reads nothing.
  bool hung_up() const;
  // Closes the parked connection, if any.
  void release();
  int interrupt_fd() const { return empty() ? wake_fd_ : epoll_fd_.get(); }

 private:
  const int wake_fd_;
  UniqueFd epoll_fd_;
  std::unique_ptr<Connection> conn_;
  Clock::time_point floor_;
};

}  // namespace leasehold::client::detail
