#include "testkit/resp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "resp/writer.h"
#include "testkit/eventually.h"

namespace leasehold::testing {

using Clock = std::chrono::steady_clock;

Result<RespClient> RespClient::connect(std::uint16_t port, std::chrono::milliseconds timeout) {
  Status last(ErrorCode::kUnreachable, "not tried");
  std::optional<RespClient> connected;
  eventually([&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = Status(ErrorCode::kIoError, std::strerror(errno));
      return true;  // not worth retrying
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      connected.emplace(RespClient(fd));
      return true;
    }
    last = Status(ErrorCode::kUnreachable, std::strerror(errno));
    ::close(fd);
    return false;
  }, timeout, std::chrono::milliseconds(20));
  if (connected) return std::move(*connected);
  return last;
}

RespClient::RespClient(RespClient&& other) noexcept
    : fd_(other.fd_), buffer_(std::move(other.buffer_)), parser_(std::move(other.parser_)) {
  other.fd_ = -1;
}

RespClient& RespClient::operator=(RespClient&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
    buffer_ = std::move(other.buffer_);
    parser_ = std::move(other.parser_);
  }
  return *this;
}

RespClient::~RespClient() { close(); }

void RespClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status RespClient::send_raw(std::string_view bytes) {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "closed");
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(ErrorCode::kIoError, std::strerror(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
  return Status::ok();
}

Result<std::size_t> RespClient::send_until_stalled(std::string_view bytes, std::chrono::milliseconds stall) {
  if (fd_ < 0) return Status(ErrorCode::kIoError, "closed");
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Status(ErrorCode::kIoError, std::strerror(errno));
    pollfd p{fd_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(stall.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // nothing could be sent for `stall`
  }
  return sent;
}

Status RespClient::send(std::initializer_list<std::string_view> args) {
  std::string out;
  resp::append_command(out, args);
  return send_raw(out);
}

Status RespClient::send(const std::vector<std::string>& args) {
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  resp::append_command(out, std::span<const std::string_view>(views));
  return send_raw(out);
}

Result<resp::Value> RespClient::read(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (!buffer_.empty()) {
      resp::ParseOutcome o = parser_.parse(buffer_);
      buffer_.erase(0, o.consumed);
      if (o.status == resp::ParseStatus::kValue) return std::move(o.value);
      if (o.status == resp::ParseStatus::kError) return Status(ErrorCode::kInvalidArgument, o.error);
    }
    if (fd_ < 0) return Status(ErrorCode::kIoError, "closed");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status(ErrorCode::kTimedOut, "no reply in time");
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n == 0) {
      close();
      return Status(ErrorCode::kIoError, "closed");
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      const Status s(ErrorCode::kIoError, std::strerror(errno));
      close();
      return s;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

resp::Value RespClient::call(std::initializer_list<std::string_view> args, std::chrono::milliseconds timeout) {
  if (Status s = send(args); !s) return resp::Value::error("IO " + s.to_string());
  auto r = read(timeout);
  if (!r) return resp::Value::error("IO " + r.status().to_string());
  return std::move(r).value();
}

resp::Value RespClient::call(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  if (Status s = send(args); !s) return resp::Value::error("IO " + s.to_string());
  auto r = read(timeout);
  if (!r) return resp::Value::error("IO " + r.status().to_string());
  return std::move(r).value();
}

bool RespClient::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (fd_ >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    auto r = read(left);
    if (!r && r.status().code() == ErrorCode::kIoError) return true;
    if (!r && r.status().code() == ErrorCode::kTimedOut) return false;
  }
  return true;
}

std::optional<std::string> info_value(RespClient& c, const std::string& section, const std::string& key) {
  const resp::Value info = c.call({"INFO", section});
  if (info.type == resp::Type::kError) return std::nullopt;
  const std::string& text = info.str;
  const std::string line_start = key + ":";
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, line_start.size()) == line_start) return std::string(line.substr(line_start.size()));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace leasehold::testing
