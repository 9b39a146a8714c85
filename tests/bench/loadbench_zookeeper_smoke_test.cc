// Smoke test of the load driver's ZooKeeper baseline (the lock recipe of
// bench/load/zk_lock_client.h) against a real standalone ZooKeeper (Debian
// `zookeeper`, started here on a free loopback port with a private data
// dir): a W2 cell (all clients one lock) and a W1 cell (each its own lock)
// complete cycles without errors and every client gets the lock. Skipped
// when java or the ZooKeeper jar is missing. Not a performance test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bench/load/load_runner.h"
#include "bench/load/zk_lock_client.h"
#include "tests/bench/private_server.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kZooKeeperJar[] = "/usr/share/java/zookeeper.jar";
constexpr char kJava[] = "/usr/bin/java";

// A private standalone ZooKeeper (its port comes from a config file).
PrivateServer private_zookeeper(const TempDir& dir) {
  return PrivateServer(dir, "zk", [&dir](std::uint16_t port) {
    const std::string cfg = dir.file("zoo.cfg");
    std::ofstream(cfg) << "tickTime=2000\ndataDir=" << dir.file("zkdata") << "\nclientPort=" << port
                       << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n";
    return std::vector<std::string>{kJava, "-Xmx256m", "-Dzookeeper.log.dir=" + dir.path(), "-cp", kZooKeeperJar,
                                    "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg};
  }, 60s);  // a JVM start; bounded
}

TEST(LoadBenchZooKeeperSmoke, LockRecipeCellsRunAgainstRealZooKeeper) {
  if (!bench::zookeeper_available()) GTEST_SKIP() << "driver built without libzookeeper-mt-dev";
  if (!std::filesystem::exists(kZooKeeperJar) || !std::filesystem::exists(kJava)) {
    GTEST_SKIP() << "Debian zookeeper (java and " << kZooKeeperJar << ") not installed";
  }
  TempDir dir("zkbench");
  PrivateServer zk = private_zookeeper(dir);
  ASSERT_TRUE(zk.ready()) << "ZooKeeper did not start; see " << dir.file("zk.log");

  bench::CellResult w2 = bench::run_cell(short_cell(bench::System::kZookeeper, bench::Workload::kOneLock, zk.port(), 2, 1000ms, "zkw2"));
  ASSERT_TRUE(w2.ok()) << w2.error;
  ASSERT_EQ(w2.per_client.size(), 2u);
  EXPECT_GT(w2.min_per_client(), 0u) << "the recipe is FIFO: both clients get the lock";

  bench::CellResult w1 = bench::run_cell(short_cell(bench::System::kZookeeper, bench::Workload::kOwnLock, zk.port(), 2, 1000ms, "zkw1"));
  ASSERT_TRUE(w1.ok()) << w1.error;
  EXPECT_GT(w1.min_per_client(), 0u);
}

}  // namespace
}  // namespace leasehold::testing
