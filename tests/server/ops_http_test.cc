// The operations HTTP listener against a real server process: every
// endpoint, the HTTP error statuses, metrics that follow real traffic, and
// locks and sessions as JSON (the audit history and its survival across a
// kill -9 restart: history_process_test.cc). HTTP is spoken by a raw
// loopback socket (testkit/http_client.h) and by curl.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <thread>

#include "testkit/server_process.h"
#include "testkit/http_client.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using nlohmann::json;
using resp::Type;
using resp::Value;

class OpsHttp : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    http_port_ = free_port();
    extra.insert(extra.end(), {"--http-listen", loopback(http_port_), "--long-hold-ms", "200"});
    ASSERT_TRUE(server_.start(dir_.file("data"), extra));
    ASSERT_TRUE(wait_for_port(http_port_, std::chrono::seconds(10)));
    c_ = server_.client();
    ASSERT_TRUE(c_.connected());
  }
  HttpResult get(const std::string& target) {
    auto r = http_get(http_port_, target);
    EXPECT_TRUE(r) << target << ": " << r.status().to_string();
    return r ? *r : HttpResult{};
  }
  json get_json(const std::string& target, int status = 200) {
    HttpResult r = get(target);
    EXPECT_EQ(r.status, status) << target << " " << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json");
    return json::parse(r.body, nullptr, false);
  }
  std::int64_t open(const std::string& owner) {
    return c_.call({"SESSION.OPEN", "60000", "OWNER", owner}).integer;
  }
  std::int64_t acquire(const std::string& lock, std::int64_t session) {
    Value v = c_.call({"LOCK.ACQUIRE", lock, std::to_string(session)});
    EXPECT_EQ(v.type, Type::kInteger) << v.debug_string();
    return v.integer;
  }

  TempDir dir_{"ops-http"};
  ServerProcess server_;
  RespClient c_;
  std::uint16_t http_port_ = 0;
};

TEST_F(OpsHttp, HealthAndReadiness) {
  start();
  HttpResult h = get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok\n");
  json r = get_json("/readyz");
  EXPECT_EQ(r["ready"], true);
  EXPECT_EQ(r["role"], "primary");
  EXPECT_EQ(r["log_writable"], true);
}

TEST_F(OpsHttp, ErrorStatuses) {
  start();
  EXPECT_EQ(get("/nope").status, 404);
  auto post = http_exchange(http_port_, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->header("allow"), "GET, HEAD");
  auto body = http_exchange(http_port_, "GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd");
  ASSERT_TRUE(body);
  EXPECT_EQ(body->status, 413);
  auto big = http_exchange(http_port_, "GET / HTTP/1.1\r\nX: " + std::string(40'000, 'a') + "\r\n\r\n");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 431);
  auto bad = http_exchange(http_port_, "this is not http\r\n\r\n");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(get("/api/locks?limit=abc").status, 400);
  auto head = http_exchange(http_port_, "HEAD /healthz HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->header("content-length"), "3");
  EXPECT_TRUE(head->body.empty());
  // The server is still fine after all that.
  EXPECT_EQ(c_.call({"PING"}), Value::simple("PONG"));
}

TEST_F(OpsHttp, LocksSessionsAndBinaryNamesAsJson) {
  start();
  const auto s = open("worker-1");
  const auto token = acquire("jobs/nightly", s);
  const std::string binary("bin\xff\x00x", 6);
  const auto t2 = acquire(binary, s);

  json locks = get_json("/api/locks");
  ASSERT_EQ(locks["count"], 2);
  json lock = get_json("/api/locks/jobs%2Fnightly");
  EXPECT_EQ(lock["name"], "jobs/nightly");
  ASSERT_EQ(lock["holders"].size(), 1u);
  EXPECT_EQ(lock["holders"][0]["token"], token);
  EXPECT_EQ(lock["holders"][0]["owner"], "worker-1");
  EXPECT_EQ(lock["holders"][0]["session"], s);

  json bin = get_json("/api/locks/bin%FF%00x");
  EXPECT_EQ(bin["name_b64"], "Ymlu/wB4");
  EXPECT_EQ(bin["name_binary"], true);
  EXPECT_EQ(bin["holders"][0]["token"], t2);
  json missing = get_json("/api/locks/none", 404);
  EXPECT_EQ(missing["name"], "none");

  json sessions = get_json("/api/sessions");
  ASSERT_EQ(sessions["sessions"].size(), 1u);
  EXPECT_EQ(sessions["sessions"][0]["owner"], "worker-1");
  EXPECT_EQ(sessions["sessions"][0]["ttl_ms"], 60000);
  EXPECT_GT(sessions["sessions"][0]["remaining_ms"].get<std::int64_t>(), 0);

  json status = get_json("/api/status");
  EXPECT_EQ(status["role"], "primary");
  EXPECT_EQ(status["locks"], 2);
  EXPECT_GE(status["last_token"].get<std::int64_t>(), t2);
  EXPECT_EQ(status["commit_latency_per_second"].size(), 300u);
  // The applied index per second: the writes above show once their second
  // is complete, and no entry is above the applied index.
  ASSERT_TRUE(eventually([&] {
    status = get_json("/api/status");
    const json& applied = status["applied_index_per_second"];
    if (applied.size() != 300u) return false;
    for (const json& v : applied) {
      if (!v.is_null()) return v.get<std::uint64_t>() <= status["applied_index"].get<std::uint64_t>();
    }
    return false;
  }, std::chrono::seconds(10))) << status.dump();
}

std::string metrics(OpsHttp& t, std::uint16_t port) {
  (void)t;
  auto r = http_get(port, "/metrics");
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("content-type").rfind("text/plain; version=0.0.4", 0), 0u);
  return r->body;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST_F(OpsHttp, MetricsFollowTrafficAndLongHolds) {
  start();
  const auto a = open("a");
  const auto b = open("b");
  const auto t = acquire("m", a);
  RespClient waiter = server_.client();
  ASSERT_TRUE(waiter.send({"LOCK.ACQUIRE", "m", std::to_string(b), "WAIT", "60000"}));
  // Poll until the wait is queued, then release: the waiter gets the lock.
  ASSERT_TRUE(eventually([&] { return !get_json("/api/locks/m")["waiters"].empty(); }, std::chrono::seconds(20),
                         std::chrono::milliseconds(20)));
  EXPECT_EQ(c_.call({"LOCK.RELEASE", "m", std::to_string(a), std::to_string(t)}), Value::simple("OK"));
  auto granted = waiter.read(std::chrono::seconds(20));
  ASSERT_TRUE(granted);
  ASSERT_EQ(granted->type, Type::kInteger);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c_.call({"SESSION.KEEPALIVE", std::to_string(a)}).type, Type::kInteger);

  // The hold passes --long-hold-ms (200) on its own: poll, no sleep.
  std::string text;
  ASSERT_TRUE(eventually([&] { return has_line(text = metrics(*this, http_port_), "leasehold_long_held_locks 1"); },
                         std::chrono::seconds(20), std::chrono::milliseconds(50)))
      << text;
  EXPECT_TRUE(has_line(text, "leasehold_grants_total{reason=\"acquired\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "leasehold_grants_total{reason=\"queued\"} 1"));
  EXPECT_TRUE(has_line(text, "leasehold_releases_total{reason=\"released\"} 1"));
  EXPECT_TRUE(has_line(text, "leasehold_acquire_wait_seconds_count 2"));
  EXPECT_TRUE(has_line(text, "leasehold_hold_seconds_count 1"));
  EXPECT_TRUE(has_line(text, "leasehold_keepalives_total 3"));
  EXPECT_TRUE(has_line(text, "leasehold_sessions 2"));
  EXPECT_TRUE(has_line(text, "leasehold_locks 1"));
  EXPECT_TRUE(has_line(text, "leasehold_last_token " + std::to_string(granted->integer)));
  EXPECT_TRUE(has_line(text, "leasehold_role{role=\"primary\"} 1"));
  EXPECT_EQ(text.find("\nleasehold_fsync_seconds_count 0\n"), std::string::npos);
  EXPECT_EQ(text.find("\nleasehold_commit_seconds_count 0\n"), std::string::npos);
  EXPECT_NE(text.find("\nleasehold_oldest_hold_seconds "), std::string::npos);
  EXPECT_NE(text.find("# HELP leasehold_grants_total "), std::string::npos);
}

// A release sent on a connection that does not speak for the holding
// session (an operator's CLI, say) has its own reason on /metrics.
TEST_F(OpsHttp, AReleaseByAnotherConnectionIsCountedAsSuch) {
  start();
  const auto a = open("a");
  const auto t = acquire("o", a);
  RespClient other = server_.client();
  EXPECT_EQ(other.call({"LOCK.RELEASE", "o", std::to_string(a), std::to_string(t)}), Value::simple("OK"));
  // The release was applied, and its event recorded, before the reply.
  const std::string text = metrics(*this, http_port_);
  EXPECT_TRUE(has_line(text, "leasehold_releases_total{reason=\"released_by_other\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "leasehold_releases_total{reason=\"released\"} 0"));
  EXPECT_TRUE(has_line(text, "leasehold_releases_total{reason=\"compat_replaced\"} 0"));
  EXPECT_TRUE(has_line(text, "leasehold_hold_seconds_count 1"));
}

TEST_F(OpsHttp, CurlReadsMetricsAndTheDashboard) {
  start();
  TempDir out("ops-curl");
  for (const std::string path : {"/metrics", "/"}) {
    SpawnOptions o;
    o.stdout_path = out.file("body");
    auto p = Subprocess::spawn({"curl", "-sS", "--fail", "--max-time", "20", "http://" + loopback(http_port_) + path}, o);
    ASSERT_TRUE(p) << p.status().to_string();
    EXPECT_EQ(p->wait(std::chrono::seconds(30)), 0) << path;
    std::ifstream in(out.file("body"));
    std::stringstream body;
    body << in.rdbuf();
    if (path == "/metrics") {
      EXPECT_NE(body.str().find("# HELP leasehold_commit_seconds"), std::string::npos);
    } else {
      EXPECT_NE(body.str().find("<title>leasehold dashboard</title>"), std::string::npos);
      // It loads nothing from elsewhere (the SVG namespace URI is a name, not a load).
      for (const char* remote : {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http", "@import",
                                 "fetch(\"http", "https://"}) {
        EXPECT_EQ(body.str().find(remote), std::string::npos) << remote;
      }
    }
  }
}

}  // namespace
}  // namespace leasehold::testing
