#include "server/http/http_side.h"

#include "server/http/http_routes.h"
#include "server/services/server_services.h"

namespace leasehold::server {

Status HttpSide::start(uv_loop_t* loop) {
  const ServerConfig& cfg = server_.config();
  if (cfg.http_listen.empty()) return Status::ok();
  HttpServerOptions options;
  if (Status st = parse_listen(cfg.http_listen, options.host, options.port); !st) return st;
  if (cfg.http_tls) options.tls = [this] { return server_.http_tls_context(); };
  http_ = std::make_unique<HttpServer>(loop, options, [this](const HttpRequest& req) {
    return route_http_request(server_, req);
  });
  return http_->listen();
}

void HttpSide::close() {
  if (http_) http_->close();
}

}  // namespace leasehold::server
