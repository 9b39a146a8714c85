// server/http/http_side.h: the server's operations HTTP listener
// (--http-listen), serving route_http_request() (server/http/http_routes.h)
// over the running server's ServerServices.
//
// Lifetime: the Server owns it; start() binds on the server's loop, close()
// stops listening and closes the HTTP connections (their handles close
// asynchronously: destroy it only after the loop ran again, see
// server/http/http_server.h).
// Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>

#include "leasehold/status.h"
#include "server/http/http_server.h"

namespace leasehold::server {

class ServerServices;

class HttpSide {
 public:
  // `server` outlives this object.
  explicit HttpSide(ServerServices& server) : server_(server) {}
  HttpSide(const HttpSide&) = delete;
  HttpSide& operator=(const HttpSide&) = delete;

  // Binds --http-listen when set (else does nothing). Errors: kInvalidArgument
  // (a bad address), as HttpServer::listen().
  Status start(uv_loop_t* loop);
  // Stops the listener and closes its connections. Idempotent.
  void close();
  // The bound port; 0 when not listening.
  std::uint16_t port() const { return http_ ? http_->port() : 0; }

 private:
  ServerServices& server_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace leasehold::server
