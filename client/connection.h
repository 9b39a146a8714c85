// client/connection.h: one RESP3 connection to one endpoint (internal).
//
// Blocking in the caller's thread, bounded by poll() with a deadline. Every
// wait can also be cut short by an "interrupt fd" (any fd that becomes
// readable, e.g. an eventfd when a session ends), reported as interrupted().
//
// After any failure of dial, send, read or roundtrip (I/O error, timeout,
// interrupt, protocol error) the connection is broken(): the stream may be
// out of step with the replies, so the owner must discard it. A server
// error reply (-CODE msg) is a value, not a failure.
//
// Errors: kUnreachable (connect failed, connection closed or reset),
// kTimedOut (deadline passed), kUnavailable "interrupted" (interrupt fd),
// kInternal (a reply broke the RESP framing).
// Thread-safety: none; one user at a time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/tls_client.h"
#include "leasehold/client.h"
#include "resp/parser.h"
#include "resp/value.h"

namespace leasehold::client::detail {

// nullopt: no deadline.
using Deadline = std::optional<Clock::time_point>;
using PushHandler = std::function<void(resp::Value)>;

// True for the Status a wait returns when its interrupt fd fired.
bool is_interrupted(const Status& status);
Status interrupted_status();

// Maps a RESP error reply text ("NOTHOLDER not the holder") to a Status,
// per the table in docs/protocol.md. Unknown prefixes map to kInternal.
Status status_from_error_reply(std::string_view text);

// What HELLO sends besides the protocol version.
struct Handshake {
  std::string client_name;  // SETNAME when set
  std::string user;         // AUTH user password when password is set ("" = "default")
  std::string password;
  // Required for a tls:// endpoint (client/tls_client.h).
  std::shared_ptr<TlsClientContext> tls;
};

class Connection {
 public:
  // TCP connect, the TLS handshake for a tls:// endpoint (the server's
  // certificate must verify: else kInvalidArgument "TLS ... not trusted"),
  // then HELLO 3 (with AUTH and SETNAME per `handshake`).
  // A -REDIRECT reply to HELLO is returned as kRedirect; a refused AUTH as
  // kInvalidArgument "WRONGPASS ...". A plain endpoint that is a TLS port
  // (the server answers HELLO with a TLS record, or closes without a byte
  // and then answers the start of a TLS handshake on a second connection
  // with one) is kInvalidArgument "HOST:PORT speaks TLS: use the endpoint
  // tls://HOST:PORT" (a usage error: the caller does not retry).
  static Result<std::unique_ptr<Connection>> dial(const Endpoint& endpoint,
                                                  Clock::time_point deadline,
                                                  int interrupt_fd,
                                                  const Handshake& handshake);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  // The socket, for the owner to poll for readiness (client/parked_connection.h);
  // never read from or written to but through this object.
  int fd() const { return fd_; }
  bool broken() const { return broken_; }
  // False when the peer closed the socket or sent unrequested bytes since the
  // last reply (then the connection must not be reused).
  bool healthy_for_reuse();

  Status send(const std::vector<std::string>& args, Deadline deadline, int interrupt_fd);
  // Waits until input is buffered or readable: true then, false when the
  // deadline passed first, interrupted() when the interrupt fd fired first.
  // Neither is a failure: nothing was consumed, the connection stays usable.
  Result<bool> wait_readable(Deadline deadline, int interrupt_fd);
  // The next value from the server, pushes included.
  Result<resp::Value> read(Deadline deadline, int interrupt_fd);
  // send, then read until a non-push value; pushes go to on_push (or are
  // dropped when it is empty).
  Result<resp::Value> roundtrip(const std::vector<std::string>& args, Deadline deadline,
                                int interrupt_fd, const PushHandler& on_push);

 private:
  Connection(int fd, Endpoint endpoint);
  // Waits for `events` on the socket; OK when ready.
  Status wait_for(short events, Deadline deadline, int interrupt_fd);
  Status fail(Status status);

  // Plain or TLS transfer of bytes; the result is what ::send / ::recv
  // return (errno set for -1), or -2 with tls_want_ set for TLS waits.
  ssize_t raw_send(const char* data, std::size_t size);
  ssize_t raw_recv(char* data, std::size_t size);
  Status tls_handshake(Clock::time_point deadline, int interrupt_fd);

  int fd_ = -1;
  Endpoint endpoint_;
  std::unique_ptr<TlsSocket> tls_;
  TlsWant tls_want_ = TlsWant::kDone;
  resp::Parser parser_{resp::Parser::Mode::kReply};
  std::string inbuf_;
  bool received_any_ = false;  // a byte came from the server (the TLS-port check)
  bool broken_ = false;
};

}  // namespace leasehold::client::detail
