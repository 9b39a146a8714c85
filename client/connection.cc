#include "client/connection.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "resp/writer.h"

namespace leasehold::client::detail {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

int millis_until(Deadline deadline) {
  if (!deadline) return -1;
  auto left = std::chrono::ceil<Millis>(*deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 60'000 ? 60'000 : static_cast<int>(left);
}

std::string errno_text(int err) { return std::strerror(err); }

// Non-blocking TCP connect to the first address that answers before the deadline.
Result<int> tcp_connect(const Endpoint& ep, Clock::time_point deadline, int interrupt_fd) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(ep.port);
  if (int rc = ::getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status(ErrorCode::kUnreachable,
                  "cannot resolve " + ep.to_string() + ": " + ::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                      ai->ai_protocol);
    if (fd < 0) {
      last_error = errno_text(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      std::array<pollfd, 2> fds{pollfd{fd, POLLOUT, 0}, pollfd{interrupt_fd, POLLIN, 0}};
      int n = 0;
      do {
        n = ::poll(fds.data(), interrupt_fd >= 0 ? 2 : 1, millis_until(deadline));
      } while (n < 0 && errno == EINTR);
      if (n > 0 && interrupt_fd >= 0 && (fds[1].revents & POLLIN) != 0) {
        ::close(fd);
        ::freeaddrinfo(found);
        return interrupted_status();
      }
      if (n == 0) {
        ::close(fd);
        ::freeaddrinfo(found);
        return Status(ErrorCode::kTimedOut, "connect to " + ep.to_string() + " timed out");
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    last_error = errno_text(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return Status(ErrorCode::kUnreachable, "cannot connect to " + ep.to_string() + ": " + last_error);
}

// The start of a TLS record from the server: an alert (0x15) or a
// handshake (0x16), then major version 3. No RESP reply starts with either
// byte. (Our TLS port closes a plaintext HELLO without a byte, and answers
// a malformed ClientHello with an alert; other TLS servers may answer the
// plaintext with an alert at once.)
bool looks_like_tls_record(std::string_view bytes) {
  return bytes.size() >= 2 && (bytes[0] == '\x15' || bytes[0] == '\x16') && bytes[1] == '\x03';
}

// Whether the server at `ep` speaks TLS: sends it the start of a TLS
// handshake (a ClientHello record with an empty body) on a connection of
// its own and looks for a TLS record in the answer (a TLS server answers
// with an alert; a RESP server with an error or nothing). Any failure, or
// no answer before the deadline, counts as no.
bool answers_tls(const Endpoint& ep, Clock::time_point deadline) {
  auto fd = tcp_connect(ep, deadline, -1);
  if (!fd) return false;
  static constexpr char kHello[] = {'\x16', '\x03', '\x01', '\x00', '\x04', '\x01', '\x00', '\x00', '\x00'};
  bool tls = false;
  if (::send(*fd, kHello, sizeof kHello, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof kHello)) {
    pollfd p{*fd, POLLIN, 0};
    int n = 0;
    do {
      n = ::poll(&p, 1, millis_until(deadline));
    } while (n < 0 && errno == EINTR);
    char head[2] = {};
    if (n > 0 && ::recv(*fd, head, sizeof head, MSG_WAITALL) == static_cast<ssize_t>(sizeof head)) {
      tls = looks_like_tls_record(std::string_view(head, sizeof head));
    }
  }
  ::close(*fd);
  return tls;
}

Status tls_port_status(const Endpoint& ep) {
  return Status(ErrorCode::kInvalidArgument,
                ep.to_string() + " speaks TLS: use the endpoint tls://" + ep.to_string());
}

}  // namespace

Status interrupted_status() { return Status(ErrorCode::kUnavailable, "interrupted"); }

bool is_interrupted(const Status& status) {
  return status.code() == ErrorCode::kUnavailable && status.message() == "interrupted";
}

Status status_from_error_reply(std::string_view text) {
  struct Prefix {
    std::string_view name;
    ErrorCode code;
  };
  static constexpr std::array<Prefix, 11> kPrefixes{{
      {"ERR", ErrorCode::kInvalidArgument},
      {"LIMIT", ErrorCode::kLimitExceeded},
      {"NOTFOUND", ErrorCode::kNotFound},
      {"NOTHOLDER", ErrorCode::kNotHolder},
      {"STALE", ErrorCode::kStaleToken},
      {"EXPIRED", ErrorCode::kSessionExpired},
      {"CONFLICT", ErrorCode::kConflict},
      {"UNAVAILABLE", ErrorCode::kUnavailable},
      {"REDIRECT", ErrorCode::kRedirect},
      {"TIMEOUT", ErrorCode::kTimedOut},
      {"INTERNAL", ErrorCode::kInternal},
  }};
  const auto space = text.find(' ');
  const std::string_view prefix = text.substr(0, space);
  // Access refusals (docs/security.md) keep their prefix: the message says
  // what was refused ("WRONGPASS invalid username-password pair ...").
  if (prefix == "NOAUTH" || prefix == "WRONGPASS" || prefix == "NOPERM") {
    return Status(ErrorCode::kInvalidArgument, std::string(text));
  }
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
  for (const auto& p : kPrefixes) {
    if (p.name == prefix) {
      return Status(p.code, std::string(rest.empty() ? prefix : rest));
    }
  }
  return Status(ErrorCode::kInternal, "unexpected error reply: " + std::string(text));
}

Connection::Connection(int fd, Endpoint endpoint) : fd_(fd), endpoint_(std::move(endpoint)) {}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<Connection>> Connection::dial(const Endpoint& endpoint,
                                                     Clock::time_point deadline,
                                                     int interrupt_fd,
                                                     const Handshake& handshake) {
  auto fd = tcp_connect(endpoint, deadline, interrupt_fd);
  if (!fd) return fd.status();
  std::unique_ptr<Connection> conn(new Connection(*fd, endpoint));
  if (endpoint.tls) {
    if (!handshake.tls) {
      return Status(ErrorCode::kInvalidArgument, endpoint.to_string() + " needs TLS options");
    }
    conn->tls_ = std::make_unique<TlsSocket>(handshake.tls, *fd, endpoint.host);
    if (Status st = conn->tls_handshake(deadline, interrupt_fd); !st) return st;
  }
  std::vector<std::string> hello{"HELLO", "3"};
  if (!handshake.password.empty()) {
    hello.push_back("AUTH");
    hello.push_back(handshake.user.empty() ? "default" : handshake.user);
    hello.push_back(handshake.password);
  }
  if (!handshake.client_name.empty()) {
    hello.push_back("SETNAME");
    hello.push_back(handshake.client_name);
  }
  auto reply = conn->roundtrip(hello, deadline, interrupt_fd, {});
  if (!reply && !endpoint.tls && !conn->received_any_ && reply.status().code() == ErrorCode::kUnreachable &&
      answers_tls(endpoint, deadline)) {
    // A TLS port closes a plaintext connection without a word: say so
    // instead of "closed by the server", which the caller would retry.
    return tls_port_status(endpoint);
  }
  if (!reply) return reply.status();
  if (reply->is_error()) return status_from_error_reply(reply->str);
  if (reply->type != resp::Type::kMap) {
    return Status(ErrorCode::kInternal,
                  endpoint.to_string() + " answered HELLO 3 with a " +
                      std::string(resp::type_name(reply->type)) + ", not a map");
  }
  return conn;
}

Status Connection::tls_handshake(Clock::time_point deadline, int interrupt_fd) {
  while (true) {
    const TlsWant want = tls_->handshake();
    if (want == TlsWant::kDone) return Status::ok();
    if (want == TlsWant::kRead || want == TlsWant::kWrite) {
      if (Status st = wait_for(want == TlsWant::kRead ? POLLIN : POLLOUT, deadline, interrupt_fd); !st) return st;
      continue;
    }
    const std::string why = "TLS handshake with " + endpoint_.to_string() + " failed: " +
                            (want == TlsWant::kClosed ? std::string("closed by the server") : tls_->error());
    return fail(Status(tls_->verify_failed() ? ErrorCode::kInvalidArgument : ErrorCode::kUnreachable, why));
  }
}

ssize_t Connection::raw_send(const char* data, std::size_t size) {
  if (!tls_) return ::send(fd_, data, size, MSG_NOSIGNAL);
  std::size_t n = 0;
  tls_want_ = tls_->write(data, size, n);
  return tls_want_ == TlsWant::kDone ? static_cast<ssize_t>(n) : -2;
}

ssize_t Connection::raw_recv(char* data, std::size_t size) {
  if (!tls_) return ::recv(fd_, data, size, 0);
  std::size_t n = 0;
  tls_want_ = tls_->read(data, size, n);
  if (tls_want_ == TlsWant::kDone) return static_cast<ssize_t>(n);
  return tls_want_ == TlsWant::kClosed ? 0 : -2;
}

Status Connection::fail(Status status) {
  broken_ = true;
  return status;
}

Status Connection::wait_for(short events, Deadline deadline, int interrupt_fd) {
  std::array<pollfd, 2> fds{pollfd{fd_, events, 0}, pollfd{interrupt_fd, POLLIN, 0}};
  const nfds_t count = interrupt_fd >= 0 ? 2 : 1;
  while (true) {
    int n = ::poll(fds.data(), count, millis_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(Status(ErrorCode::kIoError, "poll: " + errno_text(errno)));
    if (count == 2 && (fds[1].revents & POLLIN) != 0) return fail(interrupted_status());
    if (n == 0) {
      if (deadline && Clock::now() < *deadline) continue;  // woke early (clamped wait)
      return fail(Status(ErrorCode::kTimedOut,
                         "no reply from " + endpoint_.to_string() + " before the deadline"));
    }
    return Status::ok();  // ready, or an error condition the next syscall reports
  }
}

bool Connection::healthy_for_reuse() {
  if (broken_ || !inbuf_.empty()) return false;
  if (tls_ && tls_->pending()) return false;
  pollfd p{fd_, POLLIN, 0};
  int n = ::poll(&p, 1, 0);
  if (n == 0) return true;
  if (!tls_) return false;  // readable means EOF, an error, or an unrequested byte
  // TLS: the readable bytes may be records without data (TLS 1.3 session
  // tickets); reading consumes them. Data or an end means not reusable.
  char byte = 0;
  const ssize_t got = raw_recv(&byte, 1);
  if (got == -2 && tls_want_ == TlsWant::kRead) return true;
  if (got > 0) inbuf_.push_back(byte);
  return false;
}

Result<bool> Connection::wait_readable(Deadline deadline, int interrupt_fd) {
  if (broken_) return Status(ErrorCode::kUnreachable, "connection is broken");
  if (!inbuf_.empty() || (tls_ && tls_->pending())) return true;
  std::array<pollfd, 2> fds{pollfd{fd_, POLLIN, 0}, pollfd{interrupt_fd, POLLIN, 0}};
  const nfds_t count = interrupt_fd >= 0 ? 2 : 1;
  while (true) {
    int n = ::poll(fds.data(), count, millis_until(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(Status(ErrorCode::kIoError, "poll: " + errno_text(errno)));
    if (count == 2 && (fds[1].revents & POLLIN) != 0) return interrupted_status();  // nothing consumed
    if (n > 0) return true;
    if (deadline && Clock::now() >= *deadline) return false;
  }
}

Status Connection::send(const std::vector<std::string>& args, Deadline deadline,
                        int interrupt_fd) {
  if (broken_) return Status(ErrorCode::kUnreachable, "connection is broken");
  std::vector<std::string_view> views(args.begin(), args.end());
  std::string out;
  resp::append_command(out, views);
  std::size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = raw_send(out.data() + sent, out.size() - sent);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n == -2) {
      if (tls_want_ == TlsWant::kRead || tls_want_ == TlsWant::kWrite) {
        if (Status st = wait_for(tls_want_ == TlsWant::kRead ? POLLIN : POLLOUT, deadline, interrupt_fd); !st) {
          return st;
        }
        continue;
      }
      return fail(Status(ErrorCode::kUnreachable, "connection to " + endpoint_.to_string() + " lost: " +
                                                      (tls_want_ == TlsWant::kClosed ? "closed" : tls_->error())));
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Status st = wait_for(POLLOUT, deadline, interrupt_fd); !st) return st;
      continue;
    }
    return fail(Status(ErrorCode::kUnreachable,
                       "connection to " + endpoint_.to_string() + " lost: " + errno_text(errno)));
  }
  return Status::ok();
}

Result<resp::Value> Connection::read(Deadline deadline, int interrupt_fd) {
  if (broken_) return Status(ErrorCode::kUnreachable, "connection is broken");
  while (true) {
    if (!inbuf_.empty()) {
      resp::ParseOutcome out = parser_.parse(inbuf_);
      inbuf_.erase(0, out.consumed);
      if (out.status == resp::ParseStatus::kValue) return std::move(out.value);
      if (out.status == resp::ParseStatus::kError) {
        if (!tls_ && looks_like_tls_record(inbuf_)) {
          return fail(tls_port_status(endpoint_));  // a usage error: retrying cannot help
        }
        return fail(Status(ErrorCode::kInternal,
                           "bad reply from " + endpoint_.to_string() + ": " + out.error));
      }
    }
    char buf[kReadChunk];
    ssize_t n = raw_recv(buf, sizeof buf);
    if (n > 0) {
      inbuf_.append(buf, static_cast<std::size_t>(n));
      received_any_ = true;
      continue;
    }
    if (n == -2) {
      if (tls_want_ == TlsWant::kRead || tls_want_ == TlsWant::kWrite) {
        if (Status st = wait_for(tls_want_ == TlsWant::kRead ? POLLIN : POLLOUT, deadline, interrupt_fd); !st) {
          return st;
        }
        continue;
      }
      return fail(Status(ErrorCode::kUnreachable,
                         "connection to " + endpoint_.to_string() + " lost: " + tls_->error()));
    }
    if (n == 0) {
      return fail(Status(ErrorCode::kUnreachable,
                         "connection to " + endpoint_.to_string() + " closed by the server"));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (Status st = wait_for(POLLIN, deadline, interrupt_fd); !st) return st;
      continue;
    }
    return fail(Status(ErrorCode::kUnreachable,
                       "connection to " + endpoint_.to_string() + " lost: " + errno_text(errno)));
  }
}

Result<resp::Value> Connection::roundtrip(const std::vector<std::string>& args,
                                          Deadline deadline, int interrupt_fd,
                                          const PushHandler& on_push) {
  if (Status st = send(args, deadline, interrupt_fd); !st) return st;
  while (true) {
    auto value = read(deadline, interrupt_fd);
    if (!value) return value;
    if (value->type != resp::Type::kPush) return value;
    if (on_push) on_push(std::move(*value));
  }
}

}  // namespace leasehold::client::detail
