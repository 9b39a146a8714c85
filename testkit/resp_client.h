// testkit/resp_client.h: a small synchronous RESP client for tests,
// built on the resp/ codec. Blocking socket to 127.0.0.1, every read bounded
// by a timeout. connect() retries a refused connection for up to
// scaled(timeout) (testkit/eventually.h); read(), call() and
// wait_closed() use their timeout as given, since tests also use it as a
// lower bound ("no reply within 300 ms"), which must not be scaled.
//
// Errors: connect/send/read return kUnreachable (connect refused), kIoError
// (socket error or the peer closed: message "closed"), kTimedOut (no complete
// reply in time), kInvalidArgument (the reply broke the framing).
// Thread-safety: one owner per object.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"
#include "resp/parser.h"
#include "resp/value.h"

namespace leasehold::testing {

class RespClient {
 public:
  static Result<RespClient> connect(std::uint16_t port,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(5));
  RespClient() = default;
  RespClient(RespClient&& other) noexcept;
  RespClient& operator=(RespClient&& other) noexcept;
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;
  ~RespClient();

  // Sends one command (array of bulk strings).
  Status send(std::initializer_list<std::string_view> args);
  Status send(const std::vector<std::string>& args);
  // Sends raw bytes as they are.
  Status send_raw(std::string_view bytes);
  // Sends as much of `bytes` as the peer takes, without blocking: stops when
  // no byte could be sent for `stall` (the peer stopped reading and the
  // socket buffers are full) or all was sent. Value: the bytes sent; errors
  // as send_raw.
  Result<std::size_t> send_until_stalled(std::string_view bytes, std::chrono::milliseconds stall);
  // The next frame (a reply or a push), waiting at most `timeout`.
  Result<resp::Value> read(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // send + read. A transport failure becomes an error Value "IO <status>".
  resp::Value call(std::initializer_list<std::string_view> args,
                   std::chrono::milliseconds timeout = std::chrono::seconds(5));
  resp::Value call(const std::vector<std::string>& args,
                   std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // True if the peer closes the connection within `timeout` (bytes that
  // arrive meanwhile are parsed and dropped).
  bool wait_closed(std::chrono::milliseconds timeout);
  void close();
  bool connected() const { return fd_ >= 0; }

 private:
  explicit RespClient(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
  resp::Parser parser_{resp::Parser::Mode::kReply};
};

// One `key:value` line of `INFO <section>` through `c`: the value, or
// nullopt when the line is missing (or the call failed).
std::optional<std::string> info_value(RespClient& c, const std::string& section, const std::string& key);

}  // namespace leasehold::testing
