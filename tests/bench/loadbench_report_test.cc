// Unit tests of the load driver's parsing and reporting (no servers).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/load/redis_benchmark.h"
#include "bench/load/report.h"
#include "bench/load/resp_connection.h"

namespace leasehold::bench {
namespace {

TEST(LoadBenchCsv, ParsesTheRpsField) {
  auto rps = parse_redis_benchmark_csv(
      "\"test\",\"rps\",\"avg_latency_ms\"\n"
      "\"SET key:__rand_int__ v NX PX 10000\",\"84388.19\",\"0.060\"\n");
  ASSERT_TRUE(rps.is_ok()) << rps.status().to_string();
  EXPECT_DOUBLE_EQ(rps.value(), 84388.19);
}

TEST(LoadBenchCsv, NoResultLineIsCorruption) {
  auto rps = parse_redis_benchmark_csv("Could not connect to Redis at 127.0.0.1:1\n");
  ASSERT_FALSE(rps.is_ok());
  EXPECT_EQ(rps.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(rps.status().message().find("Could not connect"), std::string::npos);
}

TEST(LoadBenchEndpoint, AcceptsHostPortRejectsJunk) {
  auto e = Endpoint::parse("127.0.0.1:6379");
  ASSERT_TRUE(e.is_ok());
  EXPECT_EQ(e->port, 6379);
  EXPECT_EQ(e->to_string(), "127.0.0.1:6379");
  EXPECT_FALSE(Endpoint::parse("127.0.0.1").is_ok());
  EXPECT_FALSE(Endpoint::parse("127.0.0.1:0").is_ok());
  EXPECT_FALSE(Endpoint::parse("127.0.0.1:70000").is_ok());
  EXPECT_FALSE(Endpoint::parse("localhost:80").is_ok());
}

TEST(LoadBenchCellResult, FairnessIsMaxOverMinAndInfiniteWhenStarved) {
  CellResult r;
  r.per_client = {100, 105, 102};
  EXPECT_DOUBLE_EQ(r.fairness(), 1.05);
  r.per_client = {100, 0};
  EXPECT_TRUE(std::isinf(r.fairness()));
}

std::vector<Row> sample_rows() {
  Measurement lh{20000, false, 0, 0, ""};
  Measurement rd{10000, false, 0, 0, ""};
  Measurement lh2{5000, true, 160, 155, ""};
  Measurement rd2{1000, true, 900, 0, ""};
  return {Row{"W1", 32, {{"leasehold", lh}, {"redis-default", rd}}},
          Row{"W2 r=0", 32, {{"leasehold", lh2}, {"redis-default", rd2}}}};
}

TEST(LoadBenchReport, TableShowsRatiosAndFairness) {
  std::vector<Target> targets = {{"leasehold", System::kLeasehold, {}, {}},
                                 {"redis-default", System::kRedis, {}, {}}};
  std::string table = format_table(sample_rows(), targets);
  EXPECT_NE(table.find("lh/redis-default"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("5.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("1.03"), std::string::npos) << table;      // 160/155
  EXPECT_NE(table.find("inf(900/0)"), std::string::npos) << table;
}

TEST(LoadBenchReport, GoalsSayMetOrNot) {
  std::string goals = format_goals(sample_rows());
  EXPECT_NE(goals.find("W1 leasehold >= redis-default: 20000 vs 10000 ops/s (2.00x) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("(5.00x) -> NOT met"), std::string::npos) << goals;
  EXPECT_NE(goals.find("<= 1.05: 1.03 (160/155) -> met"), std::string::npos) << goals;
}

TEST(LoadBenchReport, CsvHasOneLinePerCell) {
  std::vector<Target> targets = {{"leasehold", System::kLeasehold, {}, {}},
                                 {"redis-default", System::kRedis, {}, {}}};
  std::string csv = format_csv(sample_rows(), targets);
  EXPECT_EQ(csv,
            "workload,clients,target,ops_per_s,max_per_client,min_per_client,error\n"
            "W1,32,leasehold,20000.0,,,\n"
            "W1,32,redis-default,10000.0,,,\n"
            "W2 r=0,32,leasehold,5000.0,160,155,\n"
            "W2 r=0,32,redis-default,1000.0,900,0,\n");
}

std::vector<Row> etcd_rows() {
  Measurement lh1{6000, false, 0, 0, ""};
  Measurement mx1{1000, false, 0, 0, ""};
  Measurement lh2{2100, true, 70, 60, ""};
  Measurement mx2{100, true, 4, 3, ""};
  return {Row{"W1", 32, {{"lh-etcd1", lh1}, {"etcd-mutex1", mx1}}},
          Row{"W2", 32, {{"lh-etcd1", lh2}, {"etcd-mutex1", mx2}}}};
}

TEST(LoadBenchReport, ExplicitRatioColumns) {
  std::vector<Target> targets = {{"lh-etcd1", System::kLeasehold, {}, {}},
                                 {"etcd-mutex1", System::kEtcdMutex, {}, "http://127.0.0.1:1"}};
  std::string table = format_table(etcd_rows(), targets, {{"lh-etcd1", "etcd-mutex1"}});
  EXPECT_NE(table.find("lh-etcd1/etcd-mutex1"), std::string::npos) << table;
  EXPECT_NE(table.find("6.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("21.00x"), std::string::npos) << table;
  EXPECT_EQ(table.find("lh/"), std::string::npos) << "no target is named leasehold\n" << table;
}

TEST(LoadBenchReport, EtcdGoalsSayMetOrNot) {
  std::string goals = format_etcd_goals(etcd_rows(), {{"lh-etcd1", "etcd-mutex1"}});
  EXPECT_NE(goals.find("W1 lh-etcd1 vs etcd-mutex1 >= 5x: 6000 vs 1000 cycles/s (6.00x) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 lh-etcd1 vs etcd-mutex1 >= 20x: 2100 vs 100 grants/s (21.00x) -> met"),
            std::string::npos)
      << goals;
  // 70/60 = 1.17 <= 1.2
  EXPECT_NE(goals.find("max/min grants per client <= 1.2: 1.17 (70/60) -> met"),
            std::string::npos)
      << goals;
  auto rows = etcd_rows();
  rows[1].by_target["lh-etcd1"].min_per_client = 50;  // 70/50 = 1.4
  rows[0].by_target["etcd-mutex1"].ops_per_s = 2000;  // 3x
  goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1"}});
  EXPECT_NE(goals.find("(3.00x) -> NOT met"), std::string::npos) << goals;
  EXPECT_NE(goals.find("1.40 (70/50) -> NOT met"), std::string::npos) << goals;
  goals = format_etcd_goals(rows, {{"lh-etcd3", "etcd-mutex3"}});
  EXPECT_NE(goals.find("W1 lh-etcd3 vs etcd-mutex3: n/a"), std::string::npos) << goals;
}

TEST(LoadBenchReport, EtcdGoalsCompareTheW2GoalWithTheWriteFloor) {
  auto rows = etcd_rows();
  rows.push_back(Row{"W2", 1, {{"etcd-txn1", Measurement{1500, true, 1500, 1500, ""}}}});
  // 20x the mutex's 100 grants/s = 2000 > 1500 sequential writes/s.
  std::string goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("W2 ceiling: 20x needs 2000 grants/s; etcd-txn1 did 1500 sequential durable writes/s"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("-> the goal is above etcd's own write rate"), std::string::npos) << goals;
  rows.back().by_target["etcd-txn1"].ops_per_s = 2500;
  goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("did 2500 sequential durable writes/s (C=1), the most a chain of one durable write per "
                       "grant can reach -> within reach"),
            std::string::npos)
      << goals;
  goals = format_etcd_goals(etcd_rows(), {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("etcd-txn1 at C=1: n/a"), std::string::npos) << goals;
  goals = format_etcd_goals(etcd_rows(), {{"lh-etcd1", "etcd-mutex1"}});
  EXPECT_EQ(goals.find("ceiling"), std::string::npos) << goals;
}

}  // namespace
}  // namespace leasehold::bench
