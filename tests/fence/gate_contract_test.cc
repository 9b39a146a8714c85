// The FenceGate contract, run against every gate implementation.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "leasehold/fence.h"
#include "leasehold/fence_durable.h"
#include "tests/fence/history_check.h"
#include "tests/fence/temp_dir.h"

namespace leasehold::fence {
namespace {

using testing::check_fence_history;
using testing::now_ns;
using testing::Op;
using testing::TempDir;

struct GateKind {
  const char* name;
  int threads;
  int ops_per_thread;  // the durable gate pays an fdatasync per raise
  std::function<std::unique_ptr<FenceGate>(const std::string& dir)> make;
};

void PrintTo(const GateKind& kind, std::ostream* os) { *os << kind.name; }

class GateContract : public ::testing::TestWithParam<GateKind> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    gate_ = GetParam().make(dir_.path() + "/gate");
    ASSERT_NE(gate_, nullptr);
  }
  Admission admit(std::string_view key, Token token) {
    Result<Admission> r = gate_->admit(key, token);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? *r : Admission{};
  }

  TempDir dir_;
  std::unique_ptr<FenceGate> gate_;
};

TEST_P(GateContract, FirstTokenIsAdmittedAndRecorded) {
  EXPECT_EQ(*gate_->highest("res"), std::nullopt);
  Admission a = admit("res", 33);
  EXPECT_TRUE(a.admitted);
  EXPECT_EQ(a.highest, 33u);
  EXPECT_EQ(*gate_->highest("res"), std::optional<Token>(33));
}

TEST_P(GateContract, HigherAdmittedEqualAdmittedLowerStale) {
  EXPECT_TRUE(admit("res", 33).admitted);
  EXPECT_TRUE(admit("res", 34).admitted);
  EXPECT_TRUE(admit("res", 34).admitted) << "the current holder may write many times";
  Admission stale = admit("res", 33);
  EXPECT_FALSE(stale.admitted);
  EXPECT_EQ(stale.highest, 34u);
  EXPECT_EQ(stale.to_status("res", 33).code(), ErrorCode::kStaleToken);
  EXPECT_EQ(*gate_->highest("res"), std::optional<Token>(34)) << "a stale token changes nothing";
}

TEST_P(GateContract, ExtremeTokens) {
  EXPECT_TRUE(admit("res", 0).admitted);
  EXPECT_TRUE(admit("res", UINT64_MAX).admitted);
  EXPECT_FALSE(admit("res", UINT64_MAX - 1).admitted);
}

TEST_P(GateContract, KeysAreIndependent) {
  EXPECT_TRUE(admit("a", 100).admitted);
  EXPECT_TRUE(admit("b", 5).admitted);
  EXPECT_FALSE(admit("a", 99).admitted);
  EXPECT_TRUE(admit("b", 6).admitted);
  EXPECT_EQ(*gate_->highest("a"), std::optional<Token>(100));
  EXPECT_EQ(*gate_->highest("b"), std::optional<Token>(6));
}

TEST_P(GateContract, BadKeysAreRejected) {
  EXPECT_EQ(gate_->admit("", 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(gate_->admit(std::string(kMaxKeyBytes + 1, 'x'), 1).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(gate_->highest("").status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(GateContract, RacingThreadsObeyTheFencingRule) {
  const int threads = GetParam().threads;
  const int per_thread = GetParam().ops_per_thread;
  std::mutex mu;
  std::vector<Op> history;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);  // seeded: replayable token streams
      std::vector<Op> mine;
      Token base = 0;
      for (int i = 0; i < per_thread; ++i) {
        // Mostly rising tokens with some stale ones, like real holders.
        base += rng() % 8;
        Token token = base + rng() % 16;
        Op op;
        op.token = token;
        op.start_ns = now_ns();
        Result<Admission> r = gate_->admit("shared", token);
        op.end_ns = now_ns();
        if (!r.is_ok()) {
          ADD_FAILURE() << r.status().to_string();
          return;
        }
        op.admitted = r->admitted;
        op.highest = r->highest;
        mine.push_back(op);
      }
      std::lock_guard lock(mu);
      history.insert(history.end(), mine.begin(), mine.end());
    });
  }
  for (auto& w : workers) w.join();
  ASSERT_EQ(history.size(), static_cast<std::size_t>(threads * per_thread));
  EXPECT_EQ(check_fence_history(history), "");
  Token max_presented = 0;
  int stale = 0;
  for (const Op& op : history) {
    max_presented = std::max(max_presented, op.token);
    stale += op.admitted ? 0 : 1;
  }
  EXPECT_EQ(*gate_->highest("shared"), std::optional<Token>(max_presented));
  EXPECT_GT(stale, 0) << "the race should produce some stale tokens";
}

INSTANTIATE_TEST_SUITE_P(
    Gates, GateContract,
    ::testing::Values(
        GateKind{"InMemory", 4, 5000,
                 [](const std::string&) -> std::unique_ptr<FenceGate> {
                   return std::make_unique<InMemoryFenceGate>();
                 }},
        GateKind{"Durable", 4, 150,
                 [](const std::string& dir) -> std::unique_ptr<FenceGate> {
                   auto gate = DurableFenceGate::open(dir);
                   if (!gate) return nullptr;
                   return std::move(gate).value();
                 }}),
    [](const ::testing::TestParamInfo<GateKind>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace leasehold::fence
