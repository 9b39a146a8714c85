#include "testkit/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace leasehold::testing {
namespace {

using Fd = UniqueFd;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

Result<HttpResult> parse(const std::string& data) {
  const std::size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string::npos || data.rfind("HTTP/1.", 0) != 0) {
    return Status(ErrorCode::kInternal, "no HTTP response head in: " + data.substr(0, 200));
  }
  HttpResult r;
  r.status = std::atoi(data.c_str() + data.find(' ') + 1);
  std::size_t pos = data.find("\r\n") + 2;
  while (pos < head_end) {
    const std::size_t eol = data.find("\r\n", pos);
    const std::string line = data.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers.emplace_back(lower(line.substr(0, colon)), value);
    }
    pos = eol + 2;
  }
  r.body = data.substr(head_end + 4);
  return r;
}

}  // namespace

std::string HttpResult::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return "";
}

Result<HttpResult> http_exchange(std::uint16_t port, std::string_view raw, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Status(ErrorCode::kIoError, std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status(ErrorCode::kIoError, std::string("connect: ") + std::strerror(errno));
  }
  std::string_view rest = raw;
  while (!rest.empty()) {
    const ssize_t n = ::send(fd.get(), rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // the server may close early (e.g. 431); read what it said
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  std::string data;
  char buf[16384];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status(ErrorCode::kTimedOut, "no complete HTTP response in time");
    pollfd p{fd.get(), POLLIN, 0};
    const int pr = ::poll(&p, 1, static_cast<int>(left.count()));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ECONNRESET && !data.empty()) break;
    if (n < 0) return Status(ErrorCode::kIoError, std::string("recv: ") + std::strerror(errno));
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  return parse(data);
}

Result<HttpResult> http_get(std::uint16_t port, std::string_view target, std::chrono::milliseconds timeout) {
  std::string req = "GET ";
  req += target;
  req += " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: leasehold-test\r\n\r\n";
  return http_exchange(port, req, timeout);
}

}  // namespace leasehold::testing
