// server/http/http_routes.h: what the operations HTTP listener serves
// (docs/operations.md): the dashboard (/), /metrics, /healthz, /readyz and
// the JSON API under /api/. GET and HEAD only (else 405); unknown paths 404.
// /healthz and /readyz are open; every other path (unknown ones too) needs a
// user with +@monitor (401 / 403) unless --http-auth none.
//
// Thread-safety: loop thread only (reads the node's applied state).
#pragma once

#include "server/http/http_server.h"

namespace leasehold::server {

class ServerServices;

HttpResponse route_http_request(ServerServices& server, const HttpRequest& request);

// The dashboard page (server/http/dashboard.html, embedded at build time).
std::string_view dashboard_html();

}  // namespace leasehold::server
