// server/http/http_server.h: the operations HTTP listener (--http-listen) on the
// server's libuv loop: one request per connection (Connection: close), GET
// and HEAD only, answered by a handler on the loop thread. With a TLS context
// (--http-tls) it speaks HTTPS through the RESP listener's TlsStream
// (server/net/tls.h): the bytes read are decrypted before the parser, the
// response encrypted before it is written.
//
// Limits: at most max_connections open at once (more are closed at once); a
// request must arrive whole within request_timeout, and its response be
// taken within request_timeout after it is answered (a client that does not
// read is closed then); the head is bounded by
// HttpLimits (server/http/http_request.h, which also lists the 400/413/431/505
// answers). The handler's response is written and the connection closed.
//
// Lifetime: close() stops listening and closes every connection; their
// handles close asynchronously, so destroy the HttpServer only after the loop
// ran again (the Server destroys it after uv_run returned).
// Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"
#include "server/http/http_request.h"
#include "server/net/tls.h"

namespace leasehold::server {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static HttpResponse text(int status, std::string body);
  static HttpResponse json(int status, std::string body);
};

// "OK", "Not Found", ... ("" for unknown codes).
std::string_view http_reason(int status);
// The bytes of a response: status line, headers (Content-Length, Connection:
// close, Cache-Control: no-store), and the body unless `head_only`.
std::string serialize_response(const HttpResponse& response, bool head_only);

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  // HTTPS when set: each new connection gets the context it returns
  // (server/net/tls.h; nullptr = plain); empty = plain HTTP.
  std::function<std::shared_ptr<TlsContext>()> tls;
  std::uint16_t port = 7380;
  std::size_t max_connections = 64;
  std::chrono::milliseconds request_timeout{10'000};
  HttpLimits limits;
};

class HttpServer {
 public:
  HttpServer(uv_loop_t* loop, HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. kInvalidArgument (bad host), kIoError "cannot listen
  // on http host:port: <reason>".
  Status listen();
  std::uint16_t port() const { return bound_port_; }
  std::string address() const;
  void close();

 private:
  struct Conn;
  struct Write;
  void on_connection(int status);
  void on_read(Conn* conn, ssize_t nread, const uv_buf_t* buf);
  void respond(Conn* conn, const HttpResponse& response, bool head_only);
  // Writes `bytes` (closing the connection after them when `close_after`).
  void send(Conn* conn, std::string bytes, bool close_after);
  void close_conn(Conn* conn);

  uv_loop_t* loop_;
  HttpServerOptions options_;
  HttpHandler handler_;
  uv_tcp_t listener_{};
  bool listening_ = false;
  std::uint16_t bound_port_ = 0;
  std::set<Conn*> conns_;
};

}  // namespace leasehold::server
