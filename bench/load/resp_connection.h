// bench/load/resp_connection.h: one blocking RESP client connection for the
// load driver.
//
// A RespConnection owns one TCP socket to host:port (TCP_NODELAY, send and
// receive timeouts so no call can hang forever). call() writes one command
// as an array of bulk strings and reads exactly one reply with the
// leasehold_resp reply parser. For pipelining, send() writes several commands
// in one write and receive() reads their replies one at a time, in order.
// It speaks RESP2 (no HELLO), which both leasehold and Redis accept.
//
// Errors: connect() returns kUnreachable when the TCP connect fails and
// kInvalidArgument for a malformed endpoint. call() returns kIoError when the
// socket fails or the peer closes, kTimedOut when no reply arrives within the
// I/O timeout, kCorruption when the reply breaks the framing. A RESP error
// reply (`-ERR ...`) is NOT an error of call(): it is returned as a Value of
// type kError, for the caller to judge. After any non-OK call() the
// connection is unusable (the stream may be out of step).
//
// Thread-safety: none; one thread per connection (the driver's model).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"
#include "resp/parser.h"
#include "resp/value.h"

namespace leasehold::bench {

struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;

  // "host:port"; host must be a dotted IPv4 address (the driver uses loopback).
  static Result<Endpoint> parse(std::string_view text);
  std::string to_string() const;
};

class RespConnection {
 public:
  static Result<RespConnection> connect(const Endpoint& endpoint,
                                        std::chrono::milliseconds io_timeout);

  RespConnection(RespConnection&& other) noexcept;
  RespConnection& operator=(RespConnection&& other) noexcept;
  RespConnection(const RespConnection&) = delete;
  RespConnection& operator=(const RespConnection&) = delete;
  ~RespConnection();

  // Sends `args` as one command and returns its reply (see the errors above).
  Result<resp::Value> call(const std::vector<std::string_view>& args);
  // Writes every command of `commands` in one send (a pipeline); read their
  // replies with receive(). Errors: as call()'s send part.
  Status send(const std::vector<std::vector<std::string_view>>& commands);
  // Reads the next reply (of an earlier send()); errors as call()'s.
  Result<resp::Value> receive();

 private:
  RespConnection(int fd, std::chrono::milliseconds io_timeout);
  Status send_all(std::string_view bytes);

  int fd_ = -1;
  std::chrono::milliseconds io_timeout_{0};
  std::string out_;  // reused encode buffer
  std::string in_;   // received, not yet parsed bytes
  std::unique_ptr<resp::Parser> parser_;
};

}  // namespace leasehold::bench
