// /readyz and the role metrics in cluster mode, against real etcd and two
// real `leasehold server` processes, each with its own --http-listen: the
// primary answers 200, the standby 429 naming the primary; after the
// primary dies the standby takes over and answers 200, counting a failover.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <thread>

#include "testkit/etcd_cluster.h"
#include "testkit/server_process.h"
#include "testkit/http_client.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

using nlohmann::json;

struct Node {
  ServerProcess server;
  std::uint16_t http_port = 0;
};

bool start_node(Node& n, const std::string& data_dir, const std::string& etcd) {
  n.http_port = free_port();
  return n.server.start(data_dir, {"--etcd", etcd, "--cluster", "opsready", "--etcd-lease-ttl", "2",
                                   "--etcd-timeout-ms", "1000", "--append-timeout-ms", "2000", "--http-listen",
                                   loopback(n.http_port)}) &&
         wait_for_port(n.http_port, std::chrono::seconds(20));
}

// Polls /readyz until it answers `status` (or scaled(within) passes); returns the last body.
json wait_ready_status(const Node& n, int status, std::chrono::seconds within) {
  json last;
  const bool answered = eventually([&] {
    auto r = http_get(n.http_port, "/readyz");
    if (!r) return false;
    last = json::parse(r->body, nullptr, false);
    return r->status == status;
  }, within, std::chrono::milliseconds(50));
  if (!answered) ADD_FAILURE() << "no /readyz " << status << " in time; last: " << last.dump();
  return last;
}

std::string metrics(const Node& n) {
  auto r = http_get(n.http_port, "/metrics");
  return r && r->status == 200 ? r->body : "";
}

TEST(OpsReadiness, PrimaryReadyStandbySaysSoFailoverCounted) {
  auto etcd = EtcdCluster::start({.members = 1});
  ASSERT_TRUE(etcd) << etcd.status().to_string();
  TempDir dir("ops-readiness");
  Node a;
  Node b;
  ASSERT_TRUE(start_node(a, dir.file("a"), (*etcd)->endpoints()));
  json ra = wait_ready_status(a, 200, std::chrono::seconds(60));
  EXPECT_EQ(ra["role"], "primary");
  ASSERT_TRUE(start_node(b, dir.file("b"), (*etcd)->endpoints()));
  json rb = wait_ready_status(b, 429, std::chrono::seconds(60));
  EXPECT_EQ(rb["role"], "standby");
  EXPECT_EQ(rb["ready"], false);
  EXPECT_EQ(rb["primary"], loopback(a.server.port())) << rb.dump();
  EXPECT_NE(metrics(b).find("\nleasehold_role{role=\"standby\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics(a).find("\nleasehold_role{role=\"primary\"} 1\n"), std::string::npos);

  a.server.process().kill9();
  json after = wait_ready_status(b, 200, std::chrono::seconds(90));
  EXPECT_EQ(after["role"], "primary");
  EXPECT_NE(metrics(b).find("\nleasehold_failovers_total 1\n"), std::string::npos) << metrics(b);
}

}  // namespace
}  // namespace leasehold::testing
