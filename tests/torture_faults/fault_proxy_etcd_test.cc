// FAULT PROXY in front of etcd: a cluster-mode `leasehold server` reaches a
// real 1-member etcd only through torture::FaultProxy (etcd's gRPC over
// HTTP/2 is plain TCP to the proxy). Partitioning the node from etcd stops
// its writes (never acknowledged without etcd); after heal it writes again,
// and tokens keep rising.
#include <gtest/gtest.h>

#include "testkit/etcd_cluster.h"
#include "testkit/server_process.h"
#include "testkit/eventually.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Type;
using resp::Value;
using torture::BlockMode;
using torture::FaultProxy;

// A write that needs etcd: a fresh session, then a lock (token) in it.
Value try_grant(std::uint16_t port) {
  auto c = RespClient::connect(port, 2s);
  if (!c) return Value::error("IO connect");
  const Value s = c->call({"SESSION.OPEN", "60000"}, 10s);
  if (s.type != Type::kInteger) return s;
  return c->call({"LOCK.ACQUIRE", "L" + std::to_string(s.integer), std::to_string(s.integer)}, 10s);
}

TEST(FaultProxyEtcdTest, PartitionFromEtcdStopsWritesAndHealRestoresThem) {
  auto etcd = EtcdCluster::start({.members = 1});
  ASSERT_TRUE(etcd) << etcd.status().to_string();
  auto proxy = FaultProxy::start((*etcd)->client_port(0));
  ASSERT_TRUE(proxy) << proxy.status().to_string();
  TempDir dir;
  ServerProcess node;
  ASSERT_TRUE(node.start(dir.path() + "/node",
                         {"--etcd", "http://127.0.0.1:" + std::to_string((*proxy)->port()), "--cluster", "proxied",
                          "--etcd-lease-ttl", "2", "--etcd-timeout-ms", "1000", "--append-timeout-ms", "1000"}));
  Value before;
  ASSERT_TRUE(eventually([&] { return (before = try_grant(node.port())).type == Type::kInteger; }, 60s))
      << before.str;

  (*proxy)->partition(BlockMode::kHold);
  Value during;
  ASSERT_TRUE(eventually([&] { return (during = try_grant(node.port())).type == Type::kError; }, 60s))
      << "a write was acknowledged while etcd was unreachable";
  EXPECT_EQ(try_grant(node.port()).type, Type::kError);

  (*proxy)->heal();
  Value after;
  ASSERT_TRUE(eventually([&] { return (after = try_grant(node.port())).type == Type::kInteger; }, 60s)) << after.str;
  EXPECT_GT(after.integer, before.integer);
  EXPECT_GT((*proxy)->stats().bytes_forwarded[0], 0u);
}

}  // namespace
}  // namespace leasehold::testing
