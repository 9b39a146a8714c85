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
#include "tests/support/net.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kZooKeeperJar[] = "/usr/share/java/zookeeper.jar";
constexpr char kJava[] = "/usr/bin/java";

class PrivateZooKeeper {
 public:
  explicit PrivateZooKeeper(const TempDir& dir) {
    for (int attempt = 0; attempt < 3 && !ready_; ++attempt) {
      port_ = free_port();
      const std::string cfg = dir.file("zoo.cfg");
      std::ofstream(cfg) << "tickTime=2000\ndataDir=" << dir.file("zkdata") << "\nclientPort=" << port_
                         << "\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxClientCnxns=0\n";
      SpawnOptions opt;
      opt.stdout_path = dir.file("zk.log");
      opt.stderr_path = dir.file("zk.err");
      auto p = Subprocess::spawn({kJava, "-Xmx256m", "-Dzookeeper.log.dir=" + dir.path(), "-cp", kZooKeeperJar,
                                  "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg},
                                 opt);
      if (!p) continue;
      process_ = std::move(p).value();
      ready_ = wait_for_port(port_, 60s);  // a JVM start; bounded
      if (!ready_) process_.kill9();
    }
  }
  bool ready() const { return ready_; }
  std::uint16_t port() const { return port_; }

 private:
  Subprocess process_;
  std::uint16_t port_ = 0;
  bool ready_ = false;
};

bench::CellOptions zk_cell(std::uint16_t port, bench::Workload workload, const std::string& prefix) {
  bench::CellOptions o;
  o.system = bench::System::kZookeeper;
  o.workload = workload;
  o.endpoint = bench::Endpoint{"127.0.0.1", port};
  o.clients = 2;
  o.warmup = 100ms;
  o.duration = 1000ms;
  o.io_timeout = 15000ms;
  o.lease_ms = 10000;
  o.name_prefix = prefix;
  return o;
}

TEST(LoadBenchZooKeeperSmoke, LockRecipeCellsRunAgainstRealZooKeeper) {
  if (!bench::zookeeper_available()) GTEST_SKIP() << "driver built without libzookeeper-mt-dev";
  if (!std::filesystem::exists(kZooKeeperJar) || !std::filesystem::exists(kJava)) {
    GTEST_SKIP() << "Debian zookeeper (java and " << kZooKeeperJar << ") not installed";
  }
  TempDir dir("zkbench");
  PrivateZooKeeper zk(dir);
  ASSERT_TRUE(zk.ready()) << "ZooKeeper did not start; see " << dir.file("zk.log");

  bench::CellResult w2 = bench::run_cell(zk_cell(zk.port(), bench::Workload::kOneLock, "zkw2"));
  ASSERT_TRUE(w2.ok()) << w2.error;
  ASSERT_EQ(w2.per_client.size(), 2u);
  EXPECT_GT(w2.min_per_client(), 0u) << "the recipe is FIFO: both clients get the lock";

  bench::CellResult w1 = bench::run_cell(zk_cell(zk.port(), bench::Workload::kOwnLock, "zkw1"));
  ASSERT_TRUE(w1.ok()) << w1.error;
  EXPECT_GT(w1.min_per_client(), 0u);
}

}  // namespace
}  // namespace leasehold::testing
