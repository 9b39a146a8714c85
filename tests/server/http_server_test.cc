// The operations HTTP listener's connection limits (server/http/http_server.h),
// in process: an HttpServer on its own libuv loop thread with a short
// request timeout, spoken to by a raw loopback socket.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "server/http/http_server.h"
#include "testkit/eventually.h"

namespace leasehold::server {
namespace {

using namespace std::chrono_literals;

// An HttpServer on a loop of its own thread; stop() (or the destructor)
// closes it and joins the thread.
class LoopHttpServer {
 public:
  LoopHttpServer(HttpServerOptions options, HttpHandler handler) {
    std::promise<std::uint16_t> bound;
    auto port = bound.get_future();
    thread_ = std::thread([this, options, handler, &bound] {
      uv_loop_init(&loop_);
      auto server = std::make_unique<HttpServer>(&loop_, options, handler);
      uv_async_init(&loop_, &stop_, [](uv_async_t* a) {
        static_cast<HttpServer*>(a->data)->close();
        uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
      });
      stop_.data = server.get();
      const Status listening = server->listen();
      bound.set_value(listening ? server->port() : 0);
      if (!listening) {
        uv_close(reinterpret_cast<uv_handle_t*>(&stop_), nullptr);
        server->close();
      }
      uv_run(&loop_, UV_RUN_DEFAULT);
      server.reset();  // after the loop ran its close callbacks
      uv_loop_close(&loop_);
    });
    port_ = port.get();
  }
  ~LoopHttpServer() { stop(); }
  LoopHttpServer(const LoopHttpServer&) = delete;
  LoopHttpServer& operator=(const LoopHttpServer&) = delete;

  std::uint16_t port() const { return port_; }
  void stop() {
    if (!thread_.joinable()) return;
    if (port_ != 0) uv_async_send(&stop_);
    thread_.join();
  }

 private:
  uv_loop_t loop_{};
  uv_async_t stop_{};
  std::thread thread_;
  std::uint16_t port_ = 0;
};

// A connected loopback socket with a small receive buffer (set before
// connect, so the window stays small); -1 on failure.
int connect_small_window(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Options with `timeout`, on a free loopback port.
HttpServerOptions on_loopback(std::chrono::milliseconds timeout) {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.request_timeout = timeout;
  return options;
}

// A handler that answers every request with a body of `bytes`.
HttpHandler body_of(std::size_t bytes) {
  return [bytes](const HttpRequest&) { return HttpResponse::text(200, std::string(bytes, 'b')); };
}

// Connects with a small receive window and sends one GET; the socket, or -1.
int send_get(std::uint16_t port) {
  const int fd = connect_small_window(port);
  if (fd < 0) return -1;
  const std::string request = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads until EOF or a reset, at most scaled(limit) long. Value: bytes read,
// and whether the stream ended (false: still open at the deadline).
std::pair<std::size_t, bool> read_to_end(int fd, std::chrono::milliseconds limit) {
  const testing::ScaledDeadline deadline(limit);
  std::size_t total = 0;
  char buf[64 * 1024];
  while (!deadline.passed()) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return {total, true};  // EOF, or ECONNRESET: closed by the server
  }
  return {total, false};
}

// A client that sends its request and never reads the (large) response is
// closed once request_timeout passed after the answer: it no longer holds
// one of the listener's few connection slots for as long as it stays
// connected.
TEST(HttpServer, AClientThatDoesNotReadItsResponseIsClosedAfterTheRequestTimeout) {
  constexpr std::size_t kBody = 32u << 20;  // far beyond any socket buffers
  LoopHttpServer server(on_loopback(200ms), body_of(kBody));
  ASSERT_NE(server.port(), 0);
  const int fd = send_get(server.port());
  ASSERT_GE(fd, 0) << std::strerror(errno);
  // A client that does not read, for 15 of the server's request timeouts.
  // Deliberate: not reading is the point, and the client cannot see the
  // server close the connection without reading (a lower bound, not scaled).
  std::this_thread::sleep_for(3s);
  const auto [bytes, ended] = read_to_end(fd, 60s);
  ::close(fd);
  EXPECT_TRUE(ended) << "the response stream neither ended nor was reset within 60 s";
  EXPECT_LT(bytes, kBody / 2) << "the server kept the connection and wrote the whole response";
}

// A client that reads its response gets all of it, however long the write
// takes within the timeout.
TEST(HttpServer, AClientThatReadsGetsTheWholeResponse) {
  constexpr std::size_t kBody = 4u << 20;
  LoopHttpServer server(on_loopback(5000ms), body_of(kBody));
  ASSERT_NE(server.port(), 0);
  const int fd = send_get(server.port());
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const auto [bytes, ended] = read_to_end(fd, 60s);
  ::close(fd);
  EXPECT_TRUE(ended);
  EXPECT_GT(bytes, kBody);  // the head and the whole body
}

}  // namespace
}  // namespace leasehold::server
