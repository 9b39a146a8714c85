// Reports (does not assert on) commit throughput with group commit over the
// real synced RocksDB log, with N proposers always keeping one request
// outstanding, like N pipelined clients. Asserts only correctness.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/node/node_test_util.h"

namespace leasehold::node {
namespace {

void run(int clients, int total) {
  testing::NodeHarness h;
  h.open();
  int replies = 0;
  int proposed = 0;
  std::function<void()> next = [&] {
    if (proposed >= total) return;
    ++proposed;
    core::Command c;
    c.body = core::OpenSession{60'000, "bench"};
    h.node().propose(std::move(c), [&](const core::ApplyResult& r) {
      EXPECT_FALSE(r.reply.is_error());
      ++replies;
      next();  // this client sends its next request after the reply
    });
  };
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < clients; ++i) next();
  ASSERT_TRUE(h.loop().run_until([&] { return replies == total; }, std::chrono::seconds(60)));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const NodeStats s = h.node().stats();
  std::printf("clients=%d commands=%d seconds=%.3f commits/s=%.0f appends=%llu avg_batch=%.1f\n", clients,
              total, secs, total / secs, static_cast<unsigned long long>(s.batches_committed),
              s.average_batch_commands);
  EXPECT_EQ(h.node().state().session_count(), static_cast<std::size_t>(total));
}

TEST(NodeThroughput, OneClient) { run(1, 300); }
TEST(NodeThroughput, HundredClients) { run(100, 5000); }

}  // namespace
}  // namespace leasehold::node
