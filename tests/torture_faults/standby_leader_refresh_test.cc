// A STANDBY FINDS ITS PRIMARY AGAIN after its read of the election failed
// (cluster/cluster_member_impl.h, refresh_leader). The torture run
// torture_cluster_partition_etcd once ended with no session openable for
// 16 s after the heal: a standby had seen an election change, its read of
// the new leader went to a member cut off from the others and failed, it
// answered "-UNAVAILABLE <read error>" from then on, and as nothing in the
// election changed again it never read again.
//
// Here the standby (node 2) reaches the 1-member etcd only through a
// FaultProxy. Holding the proxy's client-to-server direction lets etcd's
// watch events reach node 2 (server to client flows) while every read it
// sends waits and times out (--etcd-timeout-ms 1000). Node 3 joined last,
// so its election key comes after node 2's; its clean stop deletes that key
// (an election change node 2's own campaign does not wait on). Node 2's
// lease (30 s) outlives the cut, so after the heal the election does not
// change again: only the retried read can give node 2 its primary back.
#include <gtest/gtest.h>

#include <signal.h>

#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"
#include "torture/faults/fault_proxy.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using resp::Value;
using torture::BlockMode;
using torture::Direction;
using torture::FaultProxy;

// What a write sent to node `port` gets: "REDIRECT host:port" from a
// standby that knows its primary, "UNAVAILABLE ..." from one that does not.
std::string write_answer(std::uint16_t port) {
  auto c = RespClient::connect(port, 2s);
  if (!c) return "IO connect";
  const Value v = c->call({"SESSION.OPEN", "60000"}, 5s);
  return v.is_error() ? v.str : "not an error: " + std::to_string(v.integer);
}

int election_keys(EtcdCluster& etcd) {
  auto out = etcd.etcdctl({"get", "--prefix", "--keys-only", "/leasehold/test/election/"});
  if (!out) return -1;
  int keys = 0;
  for (std::size_t at = out->find("/leasehold/"); at != std::string::npos; at = out->find("/leasehold/", at + 1)) {
    ++keys;
  }
  return keys;
}

TEST(StandbyLeaderRefreshTest, AStandbyWhoseLeaderReadFailedRedirectsAgainWithoutAnotherElectionChange) {
  std::unique_ptr<FaultProxy> proxy;
  auto cluster = LeaseholdCluster::start_with(
      {.members = 1}, 3, {},
      [&](EtcdCluster& etcd) -> Status {
        auto p = FaultProxy::start(etcd.client_port(0));
        if (!p) return p.status();
        proxy = std::move(p).value();
        return Status::ok();
      },
      [&](ClusterNodeProcess& n) -> std::vector<std::string> {
        if (!n.data_dir.ends_with("/node2")) return {};
        n.etcd_endpoints = "http://127.0.0.1:" + std::to_string(proxy->port());
        return {"--etcd-lease-ttl", "30"};
      });
  ASSERT_TRUE(cluster);
  int primary = cluster->wait_primary(30s);
  ASSERT_GE(primary, 0);
  if (primary == 2) {  // node 2 must be a standby: restart it behind the others
    cluster->node(2).process.signal(SIGTERM);
    (void)cluster->node(2).process.wait(20s);
    ASSERT_TRUE(cluster->spawn(2));
    primary = cluster->wait_primary(30s, 2);
    ASSERT_GE(primary, 0);
  }
  const std::string redirect = "REDIRECT " + loopback(cluster->node(primary).port);
  std::string answer;
  ASSERT_TRUE(eventually([&] { return (answer = write_answer(cluster->node(2).port)) == redirect; }, 30s))
      << answer;
  ASSERT_TRUE(eventually([&] { return election_keys(cluster->etcd()) == 3; }, 30s));

  const int joined = cluster->add_node();  // its key comes after node 2's
  ASSERT_GE(joined, 0);
  ASSERT_TRUE(eventually([&] { return election_keys(cluster->etcd()) == 4; }, 30s));
  ASSERT_TRUE(eventually([&] { return (answer = write_answer(cluster->node(2).port)) == redirect; }, 30s))
      << answer;

  proxy->block(Direction::kClientToServer, BlockMode::kHold);
  cluster->node(joined).process.signal(SIGTERM);  // resigns: its key goes
  ASSERT_TRUE(cluster->node(joined).process.wait(20s).has_value());
  // Node 2 saw the change and could not read who leads now.
  ASSERT_TRUE(eventually([&] { return (answer = write_answer(cluster->node(2).port)).starts_with("UNAVAILABLE"); },
                         15s))
      << "node 2 still answers " << answer << "; see " << cluster->stderr_of(2);

  proxy->heal();
  EXPECT_TRUE(eventually([&] { return (answer = write_answer(cluster->node(2).port)) == redirect; }, 30s))
      << "node 2 answers " << answer << " after the heal; see " << cluster->stderr_of(2);
  EXPECT_EQ(cluster->wait_primary(5s), primary) << "the primary changed: the test no longer shows the retry";
}

}  // namespace
}  // namespace leasehold::testing
