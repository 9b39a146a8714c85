#include "server/http/http_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <memory>

#include "server/net/tls.h"

namespace leasehold::server {

struct HttpServer::Conn {
  HttpServer* server = nullptr;
  uv_tcp_t tcp{};
  uv_timer_t timer{};
  HttpRequestParser parser;
  std::unique_ptr<TlsStream> tls;  // --http-tls: the bytes on the socket are TLS records
  bool answered = false;
  bool closing = false;
  int open_handles = 0;
};

// One uv_write in flight: its bytes live until the write completes (a TLS
// handshake's records and the response may be in flight together).
struct HttpServer::Write {
  uv_write_t req{};
  Conn* conn = nullptr;
  std::string bytes;
  bool close_after = false;
};

namespace {

uv_handle_t* as_handle(void* h) { return static_cast<uv_handle_t*>(h); }

}  // namespace

HttpResponse HttpResponse::text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  r.body += '\n';
  return r;
}

std::string_view http_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

std::string serialize_response(const HttpResponse& r, bool head_only) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", r.status,
                                http_reason(r.status), r.content_type, r.body.size());
  out += "Connection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n";
  for (const auto& [name, value] : r.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

HttpServer::HttpServer(uv_loop_t* loop, HttpServerOptions options, HttpHandler handler)
    : loop_(loop), options_(std::move(options)), handler_(std::move(handler)) {}

HttpServer::~HttpServer() {
  // Connections still open here are only possible if the loop never ran
  // their close; free them (their handles are no longer used by the loop).
  for (Conn* c : conns_) delete c;
}

std::string HttpServer::address() const {
  if (options_.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", options_.host, bound_port_);
  return fmt::format("{}:{}", options_.host, bound_port_);
}

Status HttpServer::listen() {
  sockaddr_storage addr{};
  int rc = 0;
  if (options_.host.find(':') != std::string::npos) {
    rc = uv_ip6_addr(options_.host.c_str(), options_.port, reinterpret_cast<sockaddr_in6*>(&addr));
  } else {
    rc = uv_ip4_addr(options_.host.c_str(), options_.port, reinterpret_cast<sockaddr_in*>(&addr));
  }
  if (rc != 0) return Status(ErrorCode::kInvalidArgument, fmt::format("bad http listen address {}", options_.host));
  uv_tcp_init(loop_, &listener_);
  listener_.data = this;
  listening_ = true;
  rc = uv_tcp_bind(&listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0) {
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 128, [](uv_stream_t* s, int status) {
      static_cast<HttpServer*>(s->data)->on_connection(status);
    });
  }
  if (rc != 0) {
    return Status(ErrorCode::kUnavailable, fmt::format("cannot listen on http {}:{}: {}", options_.host, options_.port,
                                                   uv_strerror(rc)));
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(&listener_, reinterpret_cast<sockaddr*>(&bound), &len);
  bound_port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  spdlog::info("http listening address={} tls={}", address(), options_.tls ? "on" : "off");
  return Status::ok();
}

void HttpServer::close() {
  if (listening_) {
    listening_ = false;
    uv_close(as_handle(&listener_), nullptr);
  }
  const std::set<Conn*> all = conns_;
  for (Conn* c : all) close_conn(c);
}

void HttpServer::on_connection(int status) {
  if (status < 0) return;
  auto* c = new Conn();
  c->server = this;
  c->parser = HttpRequestParser(options_.limits);
  if (options_.tls) {
    if (std::shared_ptr<TlsContext> ctx = options_.tls()) c->tls = std::make_unique<TlsStream>(ctx);
  }
  conns_.insert(c);
  uv_tcp_init(loop_, &c->tcp);
  c->tcp.data = c;
  uv_timer_init(loop_, &c->timer);
  c->timer.data = c;
  c->open_handles = 2;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0 ||
      conns_.size() > options_.max_connections) {
    close_conn(c);
    return;
  }
  uv_timer_start(
      &c->timer,
      [](uv_timer_t* t) {
        auto* conn = static_cast<Conn*>(t->data);
        if (conn->answered) {
          // The response was not taken within request_timeout (a client
          // that does not read): the slot is freed.
          spdlog::info("http response not read in time, closing");
          conn->server->close_conn(conn);
          return;
        }
        conn->server->respond(conn, HttpResponse::text(408, "request timeout\n"), false);
      },
      // Repeating: respond() restarts it (uv_timer_again) to bound the write.
      static_cast<std::uint64_t>(options_.request_timeout.count()),
      static_cast<std::uint64_t>(options_.request_timeout.count()));
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&c->tcp),
      [](uv_handle_t*, std::size_t, uv_buf_t* buf) {
        static thread_local std::array<char, 16 * 1024> buffer;
        *buf = uv_buf_init(buffer.data(), static_cast<unsigned int>(buffer.size()));
      },
      [](uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
        auto* conn = static_cast<Conn*>(s->data);
        conn->server->on_read(conn, nread, buf);
      });
}

void HttpServer::on_read(Conn* c, ssize_t nread, const uv_buf_t* buf) {
  if (c->closing || c->answered) return;
  if (nread < 0) {
    close_conn(c);
    return;
  }
  if (nread == 0) return;
  std::string_view bytes(buf->base, static_cast<std::size_t>(nread));
  std::string plain;
  if (c->tls) {
    const Status st = c->tls->feed(bytes, plain);
    std::string records;  // handshake replies, or an alert after an error
    c->tls->drain(records);
    if (!st) {
      if (st.code() != ErrorCode::kNotFound) spdlog::debug("http TLS failed error=\"{}\"", st.message());
      if (records.empty()) {
        close_conn(c);
      } else {
        send(c, std::move(records), true);
      }
      return;
    }
    if (!records.empty()) send(c, std::move(records), false);
    if (plain.empty()) return;
    bytes = plain;
  }
  const auto state = c->parser.feed(bytes);
  if (state == HttpRequestParser::State::kNeedMore) return;
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->tcp));
  if (state == HttpRequestParser::State::kError) {
    respond(c, HttpResponse::text(c->parser.error_status(), c->parser.error_message() + "\n"), false);
    return;
  }
  const HttpRequest& req = c->parser.request();
  HttpResponse response;
  try {
    response = handler_(req);
  } catch (const std::exception& e) {  // e.g. bad_alloc or a JSON error: answer, never crash
    spdlog::error("http handler failed path={} error=\"{}\"", req.path, e.what());
    response = HttpResponse::text(500, "internal error\n");
  }
  respond(c, response, req.method == "HEAD");
}

void HttpServer::respond(Conn* c, const HttpResponse& response, bool head_only) {
  if (c->answered || c->closing) return;
  c->answered = true;
  // From here the timer bounds the write: a client must take its response
  // within request_timeout too (the timer's callback closes it then).
  uv_timer_again(&c->timer);
  std::string out = serialize_response(response, head_only);
  if (c->tls) {
    if (!c->tls->handshake_done() || !c->tls->encrypt(out)) {
      close_conn(c);  // e.g. the request timed out during the handshake
      return;
    }
    out.clear();
    c->tls->drain(out);
  }
  send(c, std::move(out), true);
}

void HttpServer::send(Conn* c, std::string bytes, bool close_after) {
  if (c->closing) return;
  auto* w = new Write();
  w->conn = c;
  w->bytes = std::move(bytes);
  w->close_after = close_after;
  w->req.data = w;
  uv_buf_t b = uv_buf_init(w->bytes.data(), static_cast<unsigned int>(w->bytes.size()));
  // A write's callback runs before the handle's close callback (a cancelled
  // write gets UV_ECANCELED), so `conn` is alive in it.
  const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), &b, 1, [](uv_write_t* req, int status) {
    auto* write = static_cast<Write*>(req->data);
    Conn* conn = write->conn;
    const bool close = write->close_after || status < 0;
    delete write;
    if (close) conn->server->close_conn(conn);
  });
  if (rc != 0) {
    delete w;
    close_conn(c);
  }
}

void HttpServer::close_conn(Conn* c) {
  if (c->closing) return;
  c->closing = true;
  auto done = [](uv_handle_t* h) {
    auto* conn = static_cast<Conn*>(h->data);
    if (--conn->open_handles == 0) {
      conn->server->conns_.erase(conn);
      delete conn;
    }
  };
  uv_close(as_handle(&c->timer), done);
  uv_close(as_handle(&c->tcp), done);
}

}  // namespace leasehold::server
