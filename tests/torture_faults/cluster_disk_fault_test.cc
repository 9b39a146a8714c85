// CLUSTER NODE DISK FAULTS: three `leasehold server` nodes on a real etcd,
// each under the disk-fault shim (torture/disk_faults.h), snapshotting
// every 20 commands. A cluster node's disk holds only its local snapshot
// files and its audit history; the log is in etcd. When the primary's disk
// fails (EIO on fsync, EIO on write) or fills up, it must keep acknowledging
// writes (they are durable in etcd), say so (INFO snapshot_error), and keep
// publishing its snapshots to etcd so etcd's log is still cut (before the
// fix a failed local file silently skipped the etcd copy: etcd's log grew
// for as long as the disk failed). After kill -9, a power cut over what it
// had not fsynced and a restart on a healthy disk, every acknowledged grant
// is there and tokens keep rising.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"
#include "torture/disk_faults.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using torture::DiskFaultFiles;

DiskFaultFiles files_of(const ClusterNodeProcess& n) {
  return {n.data_dir, n.data_dir + ".disk-control", n.data_dir + ".disk-journal"};
}

std::uint64_t number(const std::string& text) { return text.empty() ? 0 : std::stoull(text); }

TEST(ClusterDiskFaultTest, APrimaryWhoseDiskFailsKeepsAcknowledgingAndStillPublishesSnapshotsToEtcd) {
  auto per_node = [](ClusterNodeProcess& n) {
    std::filesystem::create_directories(n.data_dir);
    if (!std::filesystem::exists(files_of(n).control)) {
      EXPECT_TRUE(torture::set_control(files_of(n), ""));
    }
    n.env = torture::shim_env(files_of(n), {});
    return std::vector<std::string>{"--snapshot-every-commands", "20"};
  };
  auto cluster = LeaseholdCluster::start_with({.members = 1}, 3, {}, {}, per_node);
  ASSERT_TRUE(cluster);
  const int p = cluster->wait_primary(scaled(30s));
  ASSERT_GE(p, 0);
  auto c = RespClient::connect(cluster->node(p).port, 2s);
  ASSERT_TRUE(c);
  const resp::Value session = c->call({"SESSION.OPEN", "600000"});
  ASSERT_EQ(session.type, resp::Type::kInteger) << session.str;
  const std::string sid = std::to_string(session.integer);
  std::int64_t highest = 0;
  // n acquires and releases, each acknowledged.
  auto work = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const std::string lock = "k" + std::to_string(i % 5);
      const resp::Value a = c->call({"LOCK.ACQUIRE", lock, sid});
      ASSERT_EQ(a.type, resp::Type::kInteger) << a.str;
      highest = std::max(highest, a.integer);
      const resp::Value r = c->call({"LOCK.RELEASE", lock, sid, std::to_string(a.integer)});
      ASSERT_FALSE(r.is_error()) << r.str;
    }
  };
  work(30);
  ASSERT_TRUE(eventually([&] { return number(cluster->info_field(p, "log_first_index")) > 1; }, 10s));

  std::vector<std::pair<std::string, std::int64_t>> held;  // granted under a failed disk, never released
  for (const std::string fault : {"eio-fsync", "eio-write", "enospc"}) {
    SCOPED_TRACE(fault);
    ASSERT_TRUE(torture::set_control(files_of(cluster->node(p)), fault));
    const std::uint64_t first = number(cluster->info_field(p, "log_first_index"));
    work(60);
    const resp::Value h = c->call({"LOCK.ACQUIRE", "held-" + fault, sid});
    ASSERT_EQ(h.type, resp::Type::kInteger) << h.str;
    held.emplace_back("held-" + fault, h.integer);
    highest = std::max(highest, h.integer);
    EXPECT_TRUE(eventually([&] { return number(cluster->info_field(p, "log_first_index")) > first; }, 10s))
        << "the primary stopped publishing snapshots to etcd while its own disk failed";
    const std::string error = cluster->info_field(p, "snapshot_error");
    EXPECT_NE(error.find(fault == "enospc" ? "No space left" : "Input/output error"), std::string::npos)
        << "INFO snapshot_error: '" << error << "'";
    EXPECT_EQ(cluster->info_field(p, "node_failure"), "");
  }
  EXPECT_TRUE(cluster->wait_converged(scaled(10s)));

  // Heal as the harness does: kill -9, power cut, fault cleared, restart.
  cluster->node(p).process.kill9();
  ASSERT_TRUE(torture::cut_power(files_of(cluster->node(p))));
  ASSERT_TRUE(torture::set_control(files_of(cluster->node(p)), ""));
  ASSERT_TRUE(cluster->spawn(p));
  const int q = cluster->wait_primary(scaled(30s));
  ASSERT_GE(q, 0);
  ASSERT_TRUE(eventually(
      [&] { return number(cluster->info_field(p, "applied_revision")) >= static_cast<std::uint64_t>(highest); }, 20s));
  auto d = RespClient::connect(cluster->node(q).port, 2s);
  ASSERT_TRUE(d);
  for (const auto& [lock, token] : held) {
    const resp::Value info = d->call({"LOCK.INFO", lock});
    bool found = false;
    for (std::size_t i = 0; i + 1 < info.elements.size(); i += 2) {
      if (info.elements[i].str == "last_token") found = info.elements[i + 1].integer == token;
    }
    EXPECT_TRUE(found) << "acknowledged grant of " << lock << " (token " << token << ") lost";
  }
  const resp::Value next = d->call({"LOCK.ACQUIRE", "after-restart", sid});
  ASSERT_EQ(next.type, resp::Type::kInteger) << next.str;
  EXPECT_GT(next.integer, highest);
}

}  // namespace
}  // namespace leasehold::testing
