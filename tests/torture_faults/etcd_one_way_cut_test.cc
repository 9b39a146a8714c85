// ETCD ONE-WAY CUT: a real 3-member etcd whose members reach each other only
// through torture::EtcdPeerLinks. cut_one_way(leader, follower, kDrop) must
// lose exactly the bytes the leader sends to that follower, on both links
// between them (the follower's stream from the leader: server to client on
// the link the follower opened; the leader's posts: client to server on the
// link the leader opened), and never a byte the follower sends. The
// follower then hears no heartbeat and campaigns, term after term; the two
// others, which hear each other, ignore its votes (etcd's CheckQuorum
// lease), so the follower stays without a leader (unhealthy) while the
// leader and the other follower stay healthy and the cluster takes writes.
// Heal makes every member healthy again. (The follower's campaigns are read from
// its log: etcd 3.4's Status API reports the term of the last applied
// entry, not a candidate's.)
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "testkit/etcd_cluster.h"
#include "testkit/eventually.h"
#include "torture/etcd_peer_links.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using torture::BlockMode;
using torture::Direction;
using torture::EtcdPeerLinks;

constexpr int kC2S = static_cast<int>(Direction::kClientToServer);
constexpr int kS2C = static_cast<int>(Direction::kServerToClient);

// How many times member i's log says it became a candidate.
int candidacies(EtcdCluster& etcd, int i) {
  std::ifstream in(etcd.log_path(i));
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find("became candidate") != std::string::npos ? 1 : 0;
  return n;
}

// The end of every member's log (for a failure message).
std::string tails(EtcdCluster& etcd) {
  std::string out;
  for (int i = 0; i < etcd.size(); ++i) out += "member " + std::to_string(i) + ":\n" + etcd.log_tail(i) + "\n";
  return out;
}

TEST(EtcdOneWayCutTest, LeaderToFollowerLosesOnlyTheLeadersBytesTheFollowerCampaignsTheMajorityServes) {
  auto links = std::make_shared<EtcdPeerLinks>(3);
  EtcdClusterOptions options{.members = 3};
  options.peer_route = [links](int member, std::uint16_t port) { return links->route(member, port); };
  auto started = EtcdCluster::start(options);
  ASSERT_TRUE(started) << started.status().to_string();
  EtcdCluster& etcd = **started;
  for (int from = 0; from < 3; ++from) {
    for (int to = 0; to < 3; ++to) {
      if (from == to) continue;
      ASSERT_TRUE(eventually([&] { return links->link_stats(from, to).bytes_forwarded[kC2S] > 0; }, 20s))
          << "no traffic on the link " << from << " -> " << to;
    }
  }
  const int leader = etcd.leader(10s);
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % 3;
  const int campaigns = candidacies(etcd, follower);
  // Bytes from the follower to the leader, on both links.
  auto follower_sent = [&] {
    return links->link_stats(follower, leader).bytes_forwarded[kC2S] +
           links->link_stats(leader, follower).bytes_forwarded[kS2C];
  };

  links->cut_one_way(leader, follower, BlockMode::kDrop);
  EXPECT_TRUE(eventually([&] { return !etcd.healthy(follower, 300ms); }, 20s))
      << "the follower cut off from the leader's messages kept a leader";
  EXPECT_TRUE(eventually([&] { return candidacies(etcd, follower) >= campaigns + 2; }, 20s))
      << "the follower did not campaign (twice) while cut off";
  EXPECT_TRUE(etcd.healthy(leader, 10s));
  EXPECT_TRUE(etcd.healthy(3 - leader - follower, 10s));
  EXPECT_TRUE(eventually(
      [&] {
        return links->link_stats(follower, leader).bytes_dropped[kS2C] +
                   links->link_stats(leader, follower).bytes_dropped[kC2S] >
               0;
      },
      20s))
      << "nothing the leader sent to the follower was dropped";
  const std::uint64_t sent_at_cut_check = follower_sent();
  EXPECT_TRUE(eventually([&] { return follower_sent() > sent_at_cut_check; }, 20s))
      << "the follower's bytes to the leader stopped too";
  EXPECT_EQ(links->link_stats(follower, leader).bytes_dropped[kC2S], 0u);
  EXPECT_EQ(links->link_stats(leader, follower).bytes_dropped[kS2C], 0u);
  // The cluster still takes writes: some majority has a leader. Each try asks
  // one member, in turn, because a member that has no leader, or whose
  // leader cannot hear it, cannot take a write, and etcdctl sends it to any
  // one of its endpoints; the leader itself always can.
  Status last_put;
  int put_to = 0;
  EXPECT_TRUE(eventually(
      [&] {
        const int member = put_to++ % 3;
        last_put = etcd.etcdctl({"put", "one-way", "cut"}, "", {member}).status();
        if (!last_put) last_put = Status(last_put.code(), "via member " + std::to_string(member) + ": " + last_put.message());
        return last_put.is_ok();
      },
      30s, 200ms))
      << "the majority took no write; the last put: " << last_put.to_string() << "\n"
      << tails(etcd);

  links->heal();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(etcd.healthy(i, 30s)) << "member " << i << " after heal";
  EXPECT_TRUE(eventually(
      [&] {
        last_put = etcd.etcdctl({"put", "one-way", "healed"}).status();
        return last_put.is_ok();
      },
      30s, 200ms))
      << "no write after the heal; the last put: " << last_put.to_string() << "\n"
      << tails(etcd);
}

}  // namespace
}  // namespace leasehold::testing
