// A node elected again after a step-down must be promoted once it has
// applied everything etcd holds, however its last own append completed.
// Real etcd, a real `leasehold server --etcd` process.
//
// The case (found by a busy-machine `make test`, torture
// cluster_partition_etcd): the primary's own entry comes back on its log
// watch before the append itself completes; the primary then loses its
// election lease, and the append completes after the step-down. The node has
// applied the entry, but the member's record of what it applied followed the
// watch only, and no further event came: re-elected, it waited in
// "catching-up" for an entry it already had, and the cluster had no primary.
// The unsafe test switch `slow-etcd-append-reply` (timing only) hands each
// committed append back 2 s late, so the order above happens every time.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

TEST(ClusterPromotionTest, AnOwnAppendCompletingAfterAStepDownDoesNotBlockTheNextPromotion) {
  auto c = LeaseholdCluster::start_with({.members = 1}, 1, {"--unsafe-test-fault", "slow-etcd-append-reply"}, {},
                                        [](ClusterNodeProcess& n) {
                                          n.env = {{"LEASEHOLD_UNSAFE_TEST_FAULTS", "1"}};
                                          return std::vector<std::string>{};
                                        });
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->wait_primary(30s), 0) << c->log_tails();
  const std::string first_term = c->info_field(0, "cluster_campaign_detail");  // the election key
  ASSERT_FALSE(first_term.empty());

  auto log_keys = [&]() -> std::size_t {
    auto out = c->etcd().etcdctl({"get", "--prefix", "/leasehold/test/log/", "--keys-only"});
    return out ? lines_of(*out).size() : 0;
  };
  const std::size_t keys_before = log_keys();
  resp::Value opened;
  std::thread writer([&] {
    auto w = RespClient::connect(c->node(0).port, 2s);
    if (w) opened = w->call({"SESSION.OPEN", "60000"}, 30s);
  });
  // The entry is in etcd (and on the node's watch); its append is held 2 s.
  const bool committed = eventually([&] { return log_keys() > keys_before; }, 10s);
  if (committed) {
    auto leases = c->etcd().etcdctl({"lease", "list"});  // "found N leases", then one hex id per line
    ASSERT_TRUE(leases) << leases.status().to_string();
    for (const std::string& line : lines_of(*leases)) {
      if (line.rfind("found ", 0) == 0) continue;
      auto revoked = c->etcd().etcdctl({"lease", "revoke", line});
      EXPECT_TRUE(revoked) << revoked.status().to_string();
    }
  }
  writer.join();
  ASSERT_TRUE(committed) << c->log_tails();
  ASSERT_EQ(opened.type, resp::Type::kInteger) << "the committed SESSION.OPEN was not answered: " << opened.str;

  // Stepped down (its lease is gone), elected again, caught up, promoted.
  const bool promoted_again = eventually(
      [&] {
        return c->info_field(0, "cluster_campaign") == "primary" &&
               c->info_field(0, "cluster_campaign_detail") != first_term;
      },
      20s);
  ASSERT_TRUE(promoted_again) << "campaign " << c->info_field(0, "cluster_campaign") << " ("
                              << c->info_field(0, "cluster_campaign_detail") << "), applied_index "
                              << c->info_field(0, "applied_index") << "\n"
                              << c->log_tails();
  // The acknowledged session is in the state the new term serves.
  auto client = RespClient::connect(c->node(0).port, 2s);
  ASSERT_TRUE(client);
  const resp::Value kept = client->call({"SESSION.KEEPALIVE", std::to_string(opened.integer)}, 10s);
  EXPECT_EQ(kept.type, resp::Type::kInteger) << kept.str;
}

}  // namespace
}  // namespace leasehold::testing
