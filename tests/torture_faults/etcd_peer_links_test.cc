// ETCD PEER LINKS: a real 3-member etcd whose members reach each other only
// through torture::EtcdPeerLinks (a router proxy per member hands each
// member's connections to a proxy of their own). Every link carries
// traffic; cutting member 0 from the two others leaves it without a leader
// (unhealthy) while the majority stays healthy; heal makes it healthy again.
#include <gtest/gtest.h>

#include <memory>

#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "torture/etcd_peer_links.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using torture::BlockMode;
using torture::EtcdPeerLinks;

TEST(EtcdPeerLinksTest, EachLinkCarriesItsDialersTrafficAndACutMemberLosesItsLeader) {
  auto links = std::make_shared<EtcdPeerLinks>(3);
  EtcdClusterOptions options{.members = 3};
  options.peer_route = [links](int member, std::uint16_t port) { return links->route(member, port); };
  auto etcd = EtcdCluster::start(options);
  ASSERT_TRUE(etcd) << etcd.status().to_string();
  for (int from = 0; from < 3; ++from) {
    for (int to = 0; to < 3; ++to) {
      if (from == to) continue;
      EXPECT_TRUE(eventually([&] { return links->link_stats(from, to).bytes_forwarded[0] > 0; }, 20s))
          << "no traffic on the link " << from << " -> " << to;
    }
  }

  links->cut(0, 1, BlockMode::kHold);
  links->cut(0, 2, BlockMode::kHold);
  EXPECT_TRUE(eventually([&] { return !(*etcd)->healthy(0, 300ms); }, 30s))
      << "member 0 kept a leader while cut off";
  EXPECT_TRUE((*etcd)->healthy(1, 10s));
  EXPECT_TRUE((*etcd)->healthy(2, 10s));

  links->heal();
  EXPECT_TRUE((*etcd)->healthy(0, 30s));
}

}  // namespace
}  // namespace leasehold::testing
