#include "bench/load/resp_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <span>
#include <utility>

#include "resp/writer.h"

namespace leasehold::bench {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

Result<Endpoint> Endpoint::parse(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Status(ErrorCode::kInvalidArgument,
                  "endpoint must be host:port, got '" + std::string(text) + "'");
  }
  Endpoint e;
  e.host = std::string(text.substr(0, colon));
  auto port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
      port > 65535) {
    return Status(ErrorCode::kInvalidArgument,
                  "bad port in endpoint '" + std::string(text) + "'");
  }
  e.port = static_cast<std::uint16_t>(port);
  in_addr probe{};
  if (::inet_pton(AF_INET, e.host.c_str(), &probe) != 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "host must be an IPv4 address, got '" + e.host + "'");
  }
  return e;
}

std::string Endpoint::to_string() const { return host + ":" + std::to_string(port); }

RespConnection::RespConnection(int fd, std::chrono::milliseconds io_timeout)
    : fd_(fd),
      io_timeout_(io_timeout),
      parser_(std::make_unique<resp::Parser>(resp::Parser::Mode::kReply)) {}

RespConnection::RespConnection(RespConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      io_timeout_(other.io_timeout_),
      out_(std::move(other.out_)),
      in_(std::move(other.in_)),
      parser_(std::move(other.parser_)) {}

RespConnection& RespConnection::operator=(RespConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    io_timeout_ = other.io_timeout_;
    out_ = std::move(other.out_);
    in_ = std::move(other.in_);
    parser_ = std::move(other.parser_);
  }
  return *this;
}

RespConnection::~RespConnection() {
  if (fd_ >= 0) ::close(fd_);
}

Result<RespConnection> RespConnection::connect(const Endpoint& endpoint,
                                               std::chrono::milliseconds io_timeout) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(endpoint.port);
  if (::inet_pton(AF_INET, endpoint.host.c_str(), &addr.sin_addr) != 1) {
    return Status(ErrorCode::kInvalidArgument, "bad IPv4 address '" + endpoint.host + "'");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(ErrorCode::kIoError, errno_text("socket"));
  RespConnection conn(fd, io_timeout);  // closes fd on every early return
  timeval tv = to_timeval(io_timeout);
  int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    return Status(ErrorCode::kIoError, errno_text("setsockopt"));
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Status(ErrorCode::kUnreachable,
                  errno_text(("connect " + endpoint.to_string()).c_str()));
  }
  return conn;
}

Status RespConnection::send_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Status(ErrorCode::kTimedOut, "send timed out");
      }
      return Status(ErrorCode::kIoError, errno_text("send"));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::ok();
}

Result<resp::Value> RespConnection::call(const std::vector<std::string_view>& args) {
  if (Status s = send({args}); !s) return s;
  return receive();
}

Status RespConnection::send(const std::vector<std::vector<std::string_view>>& commands) {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "connection is closed");
  out_.clear();
  for (const auto& args : commands) resp::append_command(out_, std::span<const std::string_view>(args));
  return send_all(out_);
}

Result<resp::Value> RespConnection::receive() {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "connection is closed");
  for (;;) {
    if (!in_.empty()) {
      resp::ParseOutcome outcome = parser_->parse(in_);
      in_.erase(0, outcome.consumed);
      if (outcome.status == resp::ParseStatus::kValue) return std::move(outcome.value);
      if (outcome.status == resp::ParseStatus::kError) {
        return Status(ErrorCode::kCorruption, outcome.error);
      }
    }
    char buf[kReadChunk];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return Status(ErrorCode::kTimedOut,
                      "no reply within " + std::to_string(io_timeout_.count()) + " ms");
      }
      return Status(ErrorCode::kIoError, errno_text("recv"));
    }
    if (n == 0) return Status(ErrorCode::kIoError, "server closed the connection");
    in_.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace leasehold::bench
