// The operations HTTP listener guarded by the users file (docs/operations.md,
// HTTP access) against real server processes: no or bad credentials get 401
// with a challenge, a user without +@monitor 403, Basic auth and a bearer
// token 200, the probes stay open; HTTP protected mode (and --http-auth none);
// HTTPS with the RESP listener's certificate, checked with curl --cacert.
#include <gtest/gtest.h>

#include <csignal>

#include "tests/server/security_fixture.h"
#include "tests/server/tls_certs.h"
#include "testkit/eventually.h"
#include "testkit/http_client.h"

namespace leasehold::testing {
namespace {

const std::string kScrapeToken = "scrape-3f9c1e7a";  // the test users' bearer token

// The security tests' users, a scraper with a bearer token and only
// +@monitor, and a user with a password and +@monitor only.
std::string http_users() {
  return standard_users() + "user prometheus on token#" + sha256_hex(kScrapeToken) + " +@monitor\n" +
         "user watcher on #" + sha256_hex("watchpw") + " +@monitor\n" +
         "user retired off token#" + sha256_hex("retired-token") + " +@monitor\n";
}

std::string basic(const std::string& user_password) {
  return "Basic " + sh("printf %s " + user_password + " | base64 -w0");
}

class HttpAuth : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    write_text(dir_.file("users.acl"), http_users());
    http_port_ = free_port();
    extra.insert(extra.end(), {"--users-file", dir_.file("users.acl"), "--http-listen", loopback(http_port_)});
    ASSERT_TRUE(server_.start(dir_.file("data"), extra));
    ASSERT_TRUE(wait_for_port(http_port_, std::chrono::seconds(10)));
  }
  // GET `target` with an Authorization header ("" = none).
  HttpResult get(const std::string& target, const std::string& authorization = "") {
    std::string raw = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!authorization.empty()) raw += "Authorization: " + authorization + "\r\n";
    auto r = http_exchange(http_port_, raw + "\r\n");
    EXPECT_TRUE(r) << target << ": " << r.status().to_string();
    return r ? *r : HttpResult{};
  }
  std::string curl(const std::string& args) {
    return sh("curl -s -o /dev/null -w %{http_code} --max-time 20 " + args, 30);
  }

  TempDir dir_{"http-auth"};
  ServerProcess server_;
  std::uint16_t http_port_ = 0;
};

TEST_F(HttpAuth, NoOrBadCredentialsGet401WithAChallenge) {
  start();
  for (const char* path : {"/metrics", "/api/locks", "/api/sessions", "/api/history", "/api/status", "/"}) {
    HttpResult r = get(path);
    EXPECT_EQ(r.status, 401) << path << " " << r.body;
    EXPECT_EQ(r.header("www-authenticate"), "Basic realm=\"leasehold\", charset=\"UTF-8\"") << path;
    EXPECT_EQ(r.body.find("leasehold_"), std::string::npos) << path << " leaked: " << r.body;
  }
  EXPECT_EQ(get("/metrics", basic("admin:wrong")).status, 401);
  EXPECT_EQ(get("/metrics", basic("nobody:adminpw")).status, 401);
  EXPECT_EQ(get("/metrics", basic("carol:carolpw")).status, 401) << "a user that is off";
  EXPECT_EQ(get("/metrics", "Basic !!!notbase64").status, 401);
  EXPECT_EQ(get("/metrics", "Bearer wrong-token").status, 401);
  EXPECT_EQ(get("/metrics", "Bearer retired-token").status, 401) << "a token of a user that is off";
  EXPECT_EQ(get("/metrics", "Bearer adminpw").status, 401) << "a password is not a token";
  EXPECT_EQ(get("/metrics", "Digest x").status, 401);
  // Unknown paths too: what exists is not told to strangers.
  EXPECT_EQ(get("/nope").status, 401);
}

TEST_F(HttpAuth, UserWithoutMonitorGets403) {
  start();
  for (const char* user : {"alice:alicepw", "reader:readpw"}) {
    HttpResult r = get("/api/locks", basic(user));
    EXPECT_EQ(r.status, 403) << user << " " << r.body;
    EXPECT_NE(r.body.find("+@monitor"), std::string::npos) << r.body;
    EXPECT_EQ(get("/metrics", basic(user)).status, 403) << user;
    EXPECT_EQ(get("/", basic(user)).status, 403) << user;
  }
}

TEST_F(HttpAuth, BasicAndBearerTokenGet200) {
  start();
  // +@all includes +@monitor.
  for (const std::string& auth : {basic("admin:adminpw"), basic("watcher:watchpw"), "Bearer " + kScrapeToken,
                                  "bearer  " + kScrapeToken}) {
    for (const char* path : {"/metrics", "/api/locks", "/api/sessions", "/api/history", "/api/status", "/"}) {
      HttpResult r = get(path, auth);
      EXPECT_EQ(r.status, 200) << auth << " " << path << " " << r.body.substr(0, 200);
    }
  }
  EXPECT_NE(get("/metrics", "Bearer " + kScrapeToken).body.find("leasehold_"), std::string::npos);
  // curl, as an operator or a scraper would.
  const std::string url = "http://" + loopback(http_port_);
  EXPECT_EQ(curl("-u admin:adminpw " + url + "/api/locks"), "200");
  EXPECT_EQ(curl("-H \"Authorization: Bearer " + kScrapeToken + "\" " + url + "/metrics"), "200");
  EXPECT_EQ(curl(url + "/metrics"), "401");
  // A reload takes a token away (users file re-read on SIGHUP).
  write_text(dir_.file("users.acl"), standard_users());
  server_.process().signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return get("/metrics", "Bearer " + kScrapeToken).status == 401; },
                         std::chrono::seconds(20)));
}

TEST_F(HttpAuth, ProbesStayOpen) {
  start();
  EXPECT_EQ(get("/healthz").status, 200);
  EXPECT_EQ(get("/readyz").status, 200);
  EXPECT_EQ(get("/healthz", "Bearer wrong").status, 200) << "a probe ignores credentials";
}

TEST_F(HttpAuth, ProtectedModeRefusesAnOpenListenerAndNoneStartsLoudly) {
  ServerProcess refused;
  const std::string open_http = "0.0.0.0:" + std::to_string(free_port());
  auto exit = refused.run_to_exit(dir_.file("refused"), {"--http-listen", open_http});
  ASSERT_TRUE(exit.has_value()) << "an open HTTP listener without users started";
  EXPECT_EQ(exit->code, 64);  // a refused configuration: EX_USAGE (common/exit_codes.h)
  EXPECT_NE(exit->stderr_text.find("protected mode: refusing to listen for HTTP on 0.0.0.0"), std::string::npos)
      << exit->stderr_text;
  EXPECT_NE(exit->stderr_text.find("--http-auth none"), std::string::npos) << exit->stderr_text;
  // --protected-mode no is about the RESP port: HTTP needs its own consent.
  exit = refused.run_to_exit(dir_.file("refused2"), {"--http-listen", open_http, "--protected-mode", "no"});
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->code, 64);

  // On purpose: it starts, says so loudly, and serves without credentials.
  http_port_ = free_port();
  ASSERT_TRUE(server_.start(dir_.file("none"), {"--http-listen", "0.0.0.0:" + std::to_string(http_port_),
                                                "--http-auth", "none"}));
  ASSERT_TRUE(wait_for_port(http_port_, std::chrono::seconds(10)));
  EXPECT_EQ(get("/api/locks").status, 200);
  EXPECT_TRUE(eventually([&] {
    return read_file(server_.stderr_path()).find("HTTP WITHOUT AUTHENTICATION") != std::string::npos;
  }, std::chrono::seconds(20))) << read_file(server_.stderr_path());
}

TEST_F(HttpAuth, ProtectedModeLetsUsersGuardAnOpenListener) {
  write_text(dir_.file("users.acl"), http_users());
  http_port_ = free_port();
  ASSERT_TRUE(server_.start(dir_.file("data"), {"--users-file", dir_.file("users.acl"), "--http-listen",
                                                "0.0.0.0:" + std::to_string(http_port_)}));
  ASSERT_TRUE(wait_for_port(http_port_, std::chrono::seconds(10)));
  EXPECT_EQ(get("/api/locks").status, 401);
  EXPECT_EQ(get("/api/locks", "Bearer " + kScrapeToken).status, 200);
}

TEST_F(HttpAuth, HttpsWithTheServerCertificate) {
  TlsCerts certs(dir_);
  ASSERT_TRUE(certs.ok());
  start({"--http-tls", "--tls-cert-file", certs.path("server.crt"), "--tls-key-file", certs.path("server.key")});
  const std::string url = "https://127.0.0.1:" + std::to_string(http_port_);
  const std::string ca = "--cacert " + certs.path("ca.crt") + " ";
  EXPECT_EQ(curl(ca + "-H \"Authorization: Bearer " + kScrapeToken + "\" " + url + "/metrics"), "200");
  EXPECT_EQ(curl(ca + "-u admin:adminpw " + url + "/api/locks"), "200");
  EXPECT_EQ(curl(ca + url + "/api/locks"), "401");
  EXPECT_EQ(curl(ca + url + "/healthz"), "200");
  // The body arrives whole through TLS.
  EXPECT_NE(sh("curl -s --max-time 20 " + ca + "-H \"Authorization: Bearer " + kScrapeToken + "\" " + url +
               "/metrics").find("leasehold_"),
            std::string::npos);
  // A certificate from a CA the client does not trust is refused by curl;
  // plain HTTP on the HTTPS port gets no HTTP answer.
  EXPECT_NE(curl("--cacert " + certs.path("other-ca.crt") + " " + url + "/healthz"), "200");
  EXPECT_NE(curl("http://127.0.0.1:" + std::to_string(http_port_) + "/healthz"), "200");
  // The server still serves HTTPS after those.
  EXPECT_EQ(curl(ca + url + "/healthz"), "200");
}

TEST(HttpAuthFlags, HttpTlsNeedsCertificates) {
  TempDir dir("http-tls-flags");
  ServerProcess server;
  auto exit = server.run_to_exit(dir.file("data"), {"--http-listen", loopback(free_port()), "--http-tls"});
  ASSERT_TRUE(exit.has_value());
  EXPECT_NE(exit->code, 0);
  EXPECT_NE(exit->stderr_text.find("--tls-cert-file"), std::string::npos) << exit->stderr_text;
  exit = server.run_to_exit(dir.file("data2"), {"--http-tls"});
  ASSERT_TRUE(exit.has_value());
  EXPECT_NE(exit->stderr_text.find("--http-tls needs --http-listen"), std::string::npos) << exit->stderr_text;
}

}  // namespace
}  // namespace leasehold::testing
