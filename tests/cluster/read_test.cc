// Reads in cluster mode (docs/cluster.md "Reads"): real etcd, real
// `leasehold server --etcd` processes. The primary answers reads only after
// its read barrier (linearizable, batched); a standby redirects reads unless
// the connection sent READONLY (then: its applied state, eventually
// consistent); a primary frozen past its lease and resumed never answers a
// read from its stale state.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "testkit/cluster_fixture.h"

namespace leasehold::testing {
namespace {

// The value of `field` ("last_token", ...) in a LOCK.INFO reply; -1 if absent.
std::int64_t info_int(const resp::Value& v, std::string_view field) {
  for (std::size_t k = 0; k + 1 < v.elements.size(); k += 2) {
    if (v.elements[k].str == field) return v.elements[k + 1].integer;
  }
  return -1;
}

// Txn calls etcd member `port` has started (its Prometheus /metrics), or -1.
std::int64_t etcd_txn_calls(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string body;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[16384];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0 && body.size() < (64u << 20);) {
        body.append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  ::close(fd);
  const std::string name = "grpc_server_started_total{grpc_method=\"Txn\",grpc_service=\"etcdserverpb.KV\"";
  const auto at = body.find(name);
  if (at == std::string::npos) return -1;
  const auto sp = body.find("} ", at);
  if (sp == std::string::npos) return -1;
  return std::stoll(body.substr(sp + 2));
}

TEST(ClusterReadTest, PrimaryReadsSeeEveryAcknowledgedWriteAndShareBarriers) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  auto session = conn->call({"SESSION.OPEN", "30000"});
  ASSERT_FALSE(session.is_error()) << session.str;
  const std::string sid = std::to_string(session.integer);
  // Write, then read at once on another connection: the read sees the write.
  auto reader = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(reader);
  for (int i = 0; i < 30; ++i) {
    const std::string name = "lin" + std::to_string(i % 3);
    auto tok = conn->call({"LOCK.ACQUIRE", name, sid});
    ASSERT_EQ(tok.type, resp::Type::kInteger) << tok.debug_string();
    auto info = reader->call({"LOCK.INFO", name});
    ASSERT_FALSE(info.is_error()) << info.str;
    EXPECT_EQ(info_int(info, "last_token"), tok.integer) << "read missed an acknowledged grant";
    ASSERT_FALSE(conn->call({"LOCK.RELEASE", name, sid, std::to_string(tok.integer)}).is_error());
    ASSERT_FALSE(conn->call({"SET", "k", std::to_string(i), "PX", "60000"}).is_error());
    EXPECT_EQ(reader->call({"GET", "k"}).str, std::to_string(i));
  }

  // Batching: 16 connections x 40 reads at once. Each read needs a barrier,
  // but reads arriving while one is in flight share the next: far fewer etcd
  // txns than reads.
  constexpr int kConns = 16, kReads = 40;
  const std::int64_t before = etcd_txn_calls(c->etcd().client_port(0));
  ASSERT_GE(before, 0) << "cannot read etcd's /metrics";
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kConns; ++t) {
    threads.emplace_back([&] {
      auto r = RespClient::connect(c->node(p).port);
      if (!r) return;
      for (int i = 0; i < kReads; ++i) {
        // Pipelined: the connection runs reads one by one, so several
        // connections are what makes reads overlap.
        if (!r->call({"LOCK.INFO", "lin0"}).is_error()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::int64_t txns = etcd_txn_calls(c->etcd().client_port(0)) - before;
  std::printf("[ batching ] %d reads answered, %lld etcd txns (read barriers)\n", ok.load(),
              static_cast<long long>(txns));
  EXPECT_EQ(ok.load(), kConns * kReads);
  EXPECT_GE(txns, 1);
  EXPECT_LT(txns, kConns * kReads / 2) << "reads did not share barriers";
}

TEST(ClusterReadTest, StandbyRedirectsReadsUnlessReadonly) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;
  const std::string redirect = "REDIRECT " + loopback(c->node(p).port);
  auto primary = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(primary);
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  // The standby learns the primary from the election watch.
  eventually([&] { return standby->call({"LOCK.INFO", "x"}).str == redirect; }, 10s, 50ms);
  for (auto&& cmd : std::vector<std::vector<std::string>>{
           {"LOCK.INFO", "x"}, {"LOCK.LIST"}, {"FENCE.GET", "x"}, {"GET", "x"}, {"PTTL", "x"}, {"SESSION.LIST"}}) {
    auto v = standby->call(cmd);
    EXPECT_TRUE(v.is_error()) << cmd[0];
    EXPECT_EQ(v.str, redirect) << cmd[0];
  }
  EXPECT_NE(standby->call({"INFO"}).str.find("role:standby"), std::string::npos) << "INFO is always local";
  // HELLO says it is a cluster member, and its role (not "standalone").
  for (RespClient* conn : {&*primary, &*standby}) {
    auto hello = conn->call({"HELLO", "3"});
    ASSERT_EQ(hello.type, resp::Type::kMap) << hello.debug_string();
    EXPECT_EQ(hello.find("mode")->str, "cluster");
    EXPECT_EQ(hello.find("role")->str, conn == &*primary ? "primary" : "standby");
    ASSERT_EQ(conn->call({"HELLO", "2"}).type, resp::Type::kArray);
  }

  auto session = primary->call({"SESSION.OPEN", "30000"});
  ASSERT_FALSE(session.is_error()) << session.str;
  auto tok = primary->call({"LOCK.ACQUIRE", "x", std::to_string(session.integer)});
  ASSERT_EQ(tok.type, resp::Type::kInteger) << tok.debug_string();

  ASSERT_EQ(standby->call({"READONLY"}).str, "OK");
  // Eventually consistent: the standby catches up within a bound.
  resp::Value info;
  eventually([&] {
    info = standby->call({"LOCK.INFO", "x"});
    return info.is_error() || info_int(info, "last_token") == tok.integer;
  }, 10s, 20ms);
  ASSERT_FALSE(info.is_error()) << info.str;
  EXPECT_EQ(info_int(info, "last_token"), tok.integer) << "the standby never caught up";
  EXPECT_FALSE(standby->call({"SESSION.LIST"}).is_error());
  // Writes still redirect with READONLY on.
  EXPECT_EQ(standby->call({"SET", "k", "v", "PX", "1000"}).str, redirect);
  EXPECT_EQ(standby->call({"SESSION.OPEN", "1000"}).str, redirect);
  // READWRITE: back to redirects. READONLY is per connection.
  ASSERT_EQ(standby->call({"READWRITE"}).str, "OK");
  EXPECT_EQ(standby->call({"LOCK.INFO", "x"}).str, redirect);
  auto other = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->call({"LOCK.INFO", "x"}).str, redirect);
  // On the primary READONLY changes nothing: reads stay linearizable.
  ASSERT_EQ(primary->call({"READONLY"}).str, "OK");
  EXPECT_EQ(info_int(primary->call({"LOCK.INFO", "x"}), "last_token"), tok.integer);

  // Clean shutdown of both (standby first, then the primary with reads in
  // flight): exit code 0, so under ASan/LSan no error and no leak either.
  ASSERT_TRUE(primary->send({"LOCK.INFO", "x"}));
  for (int i : {s, p}) {
    c->node(i).process.signal(SIGTERM);
    const auto code = c->node(i).process.wait(20s);
    ASSERT_TRUE(code.has_value()) << "node " << i << " did not stop";
    EXPECT_EQ(*code, 0) << "node " << i << " (see " << c->stderr_of(i) << ")";
  }
}

TEST(ClusterReadTest, ResumedDeposedPrimaryNeverAnswersReadsFromItsStaleState) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  auto old = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(old);
  auto a = old->call({"SESSION.OPEN", "60000", "OWNER", "a"});
  ASSERT_FALSE(a.is_error()) << a.str;
  auto t1 = old->call({"LOCK.ACQUIRE", "X", std::to_string(a.integer)});
  ASSERT_EQ(t1.type, resp::Type::kInteger) << t1.debug_string();
  ASSERT_EQ(info_int(old->call({"LOCK.INFO", "X"}), "last_token"), t1.integer);
  auto late = RespClient::connect(c->node(p).port);  // connected before the freeze
  ASSERT_TRUE(late);

  c->node(p).process.signal(SIGSTOP);
  // A read reaches the frozen primary's socket; it is read only after SIGCONT.
  ASSERT_TRUE(old->send({"LOCK.INFO", "X"}));
  const int np = c->wait_primary(20s, p);
  ASSERT_GE(np, 0) << "no new primary while the old one is frozen past its lease";
  // The new primary gives X to someone else.
  auto fresh = RespClient::connect(c->node(np).port);
  ASSERT_TRUE(fresh);
  ASSERT_FALSE(fresh->call({"LOCK.REVOKE", "X"}).is_error());
  auto b = fresh->call({"SESSION.OPEN", "60000", "OWNER", "b"});
  ASSERT_FALSE(b.is_error()) << b.str;
  auto t2 = fresh->call({"LOCK.ACQUIRE", "X", std::to_string(b.integer)});
  ASSERT_EQ(t2.type, resp::Type::kInteger) << t2.debug_string();
  ASSERT_GT(t2.integer, t1.integer);

  c->node(p).process.signal(SIGCONT);
  ASSERT_TRUE(late->send({"LOCK.INFO", "X"}));  // right after SIGCONT
  for (RespClient* conn : {&*old, &*late}) {
    auto v = conn->read(10s);
    ASSERT_TRUE(v) << v.status().to_string();
    std::printf("[ deposed read ] the resumed primary answered: %s\n", v->debug_string().c_str());
    if (v->is_error()) {
      EXPECT_TRUE(v->str.rfind("REDIRECT", 0) == 0 || v->str.rfind("UNAVAILABLE", 0) == 0) << v->str;
    } else {
      EXPECT_EQ(info_int(*v, "last_token"), t2.integer) << "a stale read: the old holder's state";
    }
  }
  // Afterwards it is a standby: reads redirect to the new primary.
  eventually([&] { return c->role(p) == "standby"; }, 15s, 50ms);
  EXPECT_EQ(c->role(p), "standby");
  auto after = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(after);
  const auto v = after->call({"LOCK.INFO", "X"});
  EXPECT_TRUE(v.is_error() && (v.str.rfind("REDIRECT", 0) == 0 || v.str.rfind("UNAVAILABLE", 0) == 0)) << v.str;
}

}  // namespace
}  // namespace leasehold::testing
