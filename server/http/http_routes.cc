#include "server/http/http_routes.h"

#include <charconv>
#include <optional>

#include <spdlog/spdlog.h>

#include "server/http/http_api.h"
#include "server/observability/observability.h"
#include "server/security/http_credentials.h"
#include "server/services/server_services.h"

namespace leasehold::server {
namespace {

constexpr std::string_view kLockPrefix = "/api/locks/";
constexpr std::size_t kMaxListLimit = 10'000;

// A non-negative integer query parameter in [0, max]; `fallback` when absent;
// nullopt when malformed.
std::optional<std::uint64_t> uint_param(const HttpRequest& req, std::string_view name, std::uint64_t fallback,
                                        std::uint64_t max) {
  auto text = req.query_value(name);
  if (!text) return fallback;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || v > max) return std::nullopt;
  return v;
}

HttpResponse bad_param(std::string_view name, std::uint64_t max) {
  return HttpResponse::json(400, "{\"error\":\"" + std::string(name) + " must be an integer in [0, " +
                                     std::to_string(max) + "]\"}");
}

// The users file guards every view but the probes (docs/operations.md, HTTP
// access): no or bad credentials get 401 with a Basic challenge, a user
// without +@monitor 403; nullopt lets the request through. Secrets are never
// logged (a refused Basic user name is, at debug level).
std::optional<HttpResponse> authorize(ServerServices& server, const HttpRequest& req) {
  if (server.config().http_auth == HttpAuth::kNone) return std::nullopt;
  std::optional<std::string> credentials = req.header("authorization");
  if (!credentials && (req.path == "/" || req.path == "/index.html")) {
    // The dashboard page only: a bearer token may come as ?token= (the page
    // keeps it in sessionStorage, drops it from the address bar and sends it
    // as a header from then on; server/http/dashboard.html).
    if (auto token = req.query_value("token")) credentials = "Bearer " + *token;
  }
  const HttpIdentity who = identify_http(server.acl(), credentials);
  if (who.outcome != HttpIdentity::Outcome::kUser) {
    HttpResponse r = HttpResponse::json(401, who.outcome == HttpIdentity::Outcome::kNone
                                                 ? "{\"error\":\"authentication required\"}"
                                                 : "{\"error\":\"invalid credentials\"}");
    r.headers.emplace_back("WWW-Authenticate", std::string(kHttpAuthChallenge));
    if (who.outcome == HttpIdentity::Outcome::kBad) spdlog::debug("http authentication refused path={}", req.path);
    return r;
  }
  if (!who.user->allows(kAclMonitor)) {
    return HttpResponse::json(403, "{\"error\":\"user '" + who.user->name +
                                       "' has no permission to read the monitoring views (+@monitor)\"}");
  }
  return std::nullopt;
}

}  // namespace

HttpResponse route_http_request(ServerServices& server, const HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") {
    HttpResponse r = HttpResponse::text(405, "only GET and HEAD are allowed\n");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  const std::string& path = req.path;
  if (path == "/healthz") return HttpResponse::text(200, "ok\n");
  if (path == "/readyz") return readyz(server);
  if (auto refused = authorize(server, req)) return *refused;
  if (path == "/metrics") {
    HttpResponse r = HttpResponse::text(200, server.observability().metrics().render(server.observability().view()));
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (path == "/" || path == "/index.html") {
    HttpResponse r = HttpResponse::text(200, std::string(dashboard_html()));
    r.content_type = "text/html; charset=utf-8";
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                           "connect-src 'self'; img-src 'self' data:");
    return r;
  }
  if (path.rfind("/api/", 0) == 0 && path != "/api/history" && !server.node().opened()) {
    // Like the client port, which reads nothing yet: the state still shows
    // what the stopped run left (server/server.h, start()).
    return HttpResponse::json(503, "{\"error\":\"" + std::string(kStartingReason) + "\"}");
  }
  if (path == "/api/status") return api_status(server);
  if (path == "/api/locks") {
    auto limit = uint_param(req, "limit", 1000, kMaxListLimit);
    if (!limit) return bad_param("limit", kMaxListLimit);
    return api_locks(server, req.query_value("prefix").value_or(""), static_cast<std::size_t>(*limit));
  }
  if (req.raw_path.rfind(kLockPrefix, 0) == 0 && req.raw_path.size() > kLockPrefix.size()) {
    // Decode only the name part: "a%2Fb" is the lock "a/b".
    auto name = percent_decode(std::string_view(req.raw_path).substr(kLockPrefix.size()), false);
    if (!name) return HttpResponse::json(400, "{\"error\":\"bad percent-encoding in the lock name\"}");
    return api_lock(server, *name);
  }
  if (path == "/api/sessions") {
    auto limit = uint_param(req, "limit", 1000, kMaxListLimit);
    if (!limit) return bad_param("limit", kMaxListLimit);
    return api_sessions(server, static_cast<std::size_t>(*limit));
  }
  if (path == "/api/history") {
    auto count = uint_param(req, "count", 100, kMaxListLimit);
    if (!count) return bad_param("count", kMaxListLimit);
    auto before = uint_param(req, "before", 0, UINT64_MAX);
    if (!before) return bad_param("before", UINT64_MAX);
    auto lock = req.query_value("lock");
    return api_history(server, lock.has_value(), lock.value_or(""), static_cast<std::size_t>(*count), *before);
  }
  return HttpResponse::json(404, "{\"error\":\"no such endpoint\"}");
}

}  // namespace leasehold::server
