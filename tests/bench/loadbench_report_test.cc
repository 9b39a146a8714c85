// Unit tests of the load driver's parsing and reporting (no servers).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/load/ceiling.h"
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

Measurement meas(double ops, bool fairness, std::uint64_t max, std::uint64_t min, std::string error) {
  Measurement m;
  m.ops_per_s = ops;
  m.has_fairness = fairness;
  m.max_per_client = max;
  m.min_per_client = min;
  m.error = std::move(error);
  return m;
}

std::vector<Row> sample_rows() {
  Measurement lh = meas(20000, false, 0, 0, "");
  Measurement rd = meas(10000, false, 0, 0, "");
  Measurement lh2 = meas(5000, true, 160, 155, "");
  Measurement rd2 = meas(1000, true, 900, 0, "");
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
  EXPECT_NE(goals.find("Goals (C=32)"), std::string::npos) << goals;
  EXPECT_NE(goals.find("W1 leasehold >= 0.8x batching ceiling: n/a"), std::string::npos) << goals;
  EXPECT_NE(goals.find("W1 leasehold >= 1.5x redis-always: n/a"), std::string::npos) << goals;
  EXPECT_NE(goals.find("<= 1.05: 1.03 (160/155) -> met"), std::string::npos) << goals;
  EXPECT_NE(goals.find("ratios leasehold: W1/redis-default 2.00x, W2/redis-default(r=0) 5.00x"),
            std::string::npos)
      << goals;
}

TEST(LoadBenchReport, GoalsAgainstTheCeilingAndRedisAlways) {
  auto rows = sample_rows();
  rows[0].by_target["redis-always"] = meas(12000, false, 0, 0, "");    // W1: 20000 / 12000 = 1.67x
  rows[1].by_target["redis-always"] = meas(3000, true, 100, 90, "");   // W2: 5000 / 3000 = 1.67x
  rows.push_back(Row{"W1", 128, {{"leasehold", meas(1, false, 0, 0, "")}}});  // C=32 is judged, not 128
  Ceiling c;
  c.fsync_before_us = 150;  // fsync 0.2 ms (median of 150, 250)
  c.fsync_after_us = 250;
  c.rtt_before_us = 50;     // RTT 0.05 ms: hand-off 4000/s, W1 at C=32: 64000/s
  c.rtt_after_us = 50;
  ASSERT_DOUBLE_EQ(c.handoff_per_s(), 4000);
  ASSERT_DOUBLE_EQ(c.batching_per_s(32), 64000);
  std::string goals = format_goals(rows, &c);
  EXPECT_NE(goals.find("W1 leasehold >= 0.8x batching ceiling C/(2(fsync+RTT)): 20000 vs 64000 cycles/s "
                       "(0.31x) -> NOT met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W1 leasehold >= 1.5x redis-always: 20000 vs 12000 cycles/s (1.67x) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 leasehold >= 0.8x hand-off ceiling 1/(fsync+RTT): 5000 vs 4000 grants/s (1.25x) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 r=0 leasehold >= 2x redis-always spin-lock: 5000 vs 3000 grants/s (1.67x) -> NOT met"),
            std::string::npos)
      << goals;
  EXPECT_EQ(goals.find("leasehold-lease"), std::string::npos) << "no lease column, no lease goals\n" << goals;
  // redis-default (10000 cycles/s, no durable write) is below the goal's 0.8 x 64000: a limit, said so.
  EXPECT_NE(goals.find("limit: W1 with no durable write at all on this machine (redis-default, the fastest column "
                       "that writes nothing durable): 10000 cycles/s, 0.20x of the goal's 51200 -> the goal is "
                       "beyond these cores"),
            std::string::npos)
      << goals;

  EXPECT_EQ(goals.find("of the goal's 18000"), std::string::npos) << "a met goal gets no limit line\n" << goals;
  {
    // Missed: 20000 < 1.5 x 15000; no durable write at all (10000) is 0.44x of that.
    auto slower = rows;
    slower[0].by_target["redis-always"] = meas(15000, false, 0, 0, "");
    const std::string missed = format_goals(slower, &c);
    EXPECT_NE(missed.find("W1 leasehold >= 1.5x redis-always: 20000 vs 15000 cycles/s (1.33x) -> NOT met\n"
                          "  limit: W1 with no durable write at all on this machine (redis-default, the fastest "
                          "column that writes nothing durable): 10000 cycles/s, 0.44x of the goal's 22500 -> the "
                          "goal is beyond these cores"),
              std::string::npos)
        << missed;
  }
  EXPECT_EQ(goals.find("limit: W2"), std::string::npos) << "no lease column, no W2 limit\n" << goals;
  rows[0].by_target["leasehold-lease"] = meas(10000, false, 0, 0, "");  // = redis-default
  rows[1].by_target["leasehold-lease"] = meas(1500, true, 21, 20, "");  // 1.5x redis-default r=0
  goals = format_goals(rows, &c);
  // W2 with no disk: 1/1500 s = 0.667 ms; + fsync 0.2 ms = 0.867 ms -> 1154/s, below 0.8 x 4000.
  EXPECT_NE(goals.find("limit: W2 hand-off with no durable write (leasehold-lease, the same clients) 0.667 ms; + "
                       "fsync p50 0.200 ms = 1154 grants/s, 0.36x of the goal's 3200 -> the goal needs a faster "
                       "hand-off than the server's no-disk path on these cores"),
            std::string::npos)
      << goals;
  {
    auto fast = rows;
    fast[1].by_target["leasehold-lease"] = meas(50000, true, 21, 20, "");  // 0.02 ms + 0.2 ms -> 4545/s
    EXPECT_NE(format_goals(fast, &c).find("= 4545 grants/s, 1.42x of the goal's 3200 -> the no-disk path allows "
                                          "the goal: the rest is the commit"),
              std::string::npos)
        << format_goals(fast, &c);
  }
  rows[0].by_target["leasehold-lease"] = meas(60000, false, 0, 0, "");  // the faster one, above 51200
  EXPECT_NE(format_goals(rows, &c).find("(leasehold-lease, the fastest column that writes nothing durable): 60000 "
                                        "cycles/s, 1.17x of the goal's 51200 -> the cores allow the goal"),
            std::string::npos)
      << format_goals(rows, &c);
  rows[0].by_target["leasehold-lease"] = meas(10000, false, 0, 0, "");
  EXPECT_NE(goals.find("W1 leasehold-lease >= 1.0x redis-default: 10000 vs 10000 cycles/s (1.00x) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 r=0 leasehold-lease >= 2x redis-default spin-lock: 1500 vs 1000 grants/s (1.50x) -> NOT met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 leasehold-lease max/min grants per client <= 1.05: 1.05 (21/20) -> met"),
            std::string::npos)
      << goals;
}

TEST(LoadBenchReport, CeilingColumnsAndLine) {
  Ceiling c;
  c.fsync_dir = "/data";
  c.rtt_target = "leasehold";
  c.fsync_before_us = 900;
  c.fsync_between_us = {100, 200};  // median of 100, 200, 900 = 200
  c.rtt_before_us = 40;
  c.rtt_after_us = 60;              // mean 50: fsync + RTT = 0.25 ms
  std::vector<Target> targets = {{"leasehold", System::kLeasehold, {}, {}},
                                 {"redis-default", System::kRedis, {}, {}}};
  std::string table = format_table(sample_rows(), targets, {}, &c);
  EXPECT_NE(table.find("leasehold/ceiling"), std::string::npos) << table;
  EXPECT_NE(table.find("64000"), std::string::npos) << "W1 C=32: 32 / (2 x 0.25 ms)\n" << table;
  EXPECT_NE(table.find("0.31x"), std::string::npos) << "20000 / 64000\n" << table;
  EXPECT_NE(table.find("4000"), std::string::npos) << "W2: 1 / 0.25 ms\n" << table;
  EXPECT_NE(table.find("1.25x"), std::string::npos) << "5000 / 4000\n" << table;
  std::string line = format_ceiling(c);
  EXPECT_NE(line.find("fdatasync p50 0.200 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("2 probes between cells 0.100 ms to 0.200 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("PING RTT p50 0.050 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("W2 hand-off 1/(fsync+RTT) = 4000 grants/s"), std::string::npos) << line;
  EXPECT_EQ(format_table(sample_rows(), targets, {}, nullptr).find("ceiling"), std::string::npos);
}

TEST(LoadBenchReport, LatencyTableAndPercentiles) {
  std::vector<std::int64_t> ns;
  for (int i = 1; i <= 100; ++i) ns.push_back(i * 1000);  // 1..100 us
  LatencySummary l = summarize_latencies(ns);
  EXPECT_EQ(l.samples, 100u);
  EXPECT_DOUBLE_EQ(l.p50_us, 50);
  EXPECT_DOUBLE_EQ(l.p99_us, 99);
  std::vector<std::int64_t> none;
  EXPECT_EQ(summarize_latencies(none).samples, 0u);

  auto rows = sample_rows();
  rows[0].by_target["leasehold"].acquire = LatencySummary{450, 2500, 10};
  rows[1].by_target["leasehold"].handoff = LatencySummary{300, 12000, 10};
  std::vector<Target> targets = {{"leasehold", System::kLeasehold, {}, {}},
                                 {"redis-default", System::kRedis, {}, {}}};
  std::string table = format_latency_table(rows, targets);
  EXPECT_NE(table.find("W1 acquire"), std::string::npos) << table;
  EXPECT_NE(table.find("0.45/2.50"), std::string::npos) << table;
  EXPECT_NE(table.find("W2 r=0 hand-off"), std::string::npos) << table;
  EXPECT_NE(table.find("0.30/12"), std::string::npos) << table;
}

TEST(LoadBenchReport, CsvHasOneLinePerCell) {
  std::vector<Target> targets = {{"leasehold", System::kLeasehold, {}, {}},
                                 {"redis-default", System::kRedis, {}, {}}};
  auto rows = sample_rows();
  rows[0].by_target["leasehold"].acquire = LatencySummary{450, 2500, 10};
  std::string csv = format_csv(rows, targets);
  EXPECT_EQ(csv,
            "workload,clients,target,ops_per_s,max_per_client,min_per_client,error,"
            "acquire_p50_us,acquire_p99_us,handoff_p50_us,handoff_p99_us\n"
            "W1,32,leasehold,20000.0,,,,450.0,2500.0,,\n"
            "W1,32,redis-default,10000.0,,,,,,,\n"
            "W2 r=0,32,leasehold,5000.0,160,155,,,,,\n"
            "W2 r=0,32,redis-default,1000.0,900,0,,,,,\n");
}

std::vector<Row> etcd_rows() {
  Measurement lh1 = meas(6000, false, 0, 0, "");
  Measurement mx1 = meas(1000, false, 0, 0, "");
  Measurement lh2 = meas(2100, true, 70, 60, "");
  Measurement mx2 = meas(100, true, 4, 3, "");
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
  // 70/60 = 1.17 <= 1.2
  EXPECT_NE(goals.find("max/min grants per client <= 1.2: 1.17 (70/60) -> met"),
            std::string::npos)
      << goals;
  EXPECT_NE(goals.find("W2 lh-etcd1 vs etcd-mutex1 (for the record; the 20x goal was withdrawn): 21.00x"),
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

TEST(LoadBenchReport, EtcdW2GoalIsAgainstTheWriteFloor) {
  auto rows = etcd_rows();
  rows.push_back(Row{"W2", 1, {{"etcd-txn1", meas(2500, true, 2500, 2500, "")}}});
  // 0.8 x 2500 = 2000 <= 2100 grants/s.
  std::string goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("W2 lh-etcd1 >= 0.8x etcd-txn1 at C=1 (etcd's sequential write rate): 2100 vs 2500 "
                       "grants/s (0.84x) -> met"),
            std::string::npos)
      << goals;
  rows.back().by_target["etcd-txn1"].ops_per_s = 3000;  // 0.70x
  goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("(0.70x) -> NOT met"), std::string::npos) << goals;
  goals = format_etcd_goals(etcd_rows(), {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_NE(goals.find("W2 lh-etcd1 >= 0.8x etcd-txn1 at C=1: n/a"), std::string::npos) << goals;
  goals = format_etcd_goals(etcd_rows(), {{"lh-etcd1", "etcd-mutex1"}});
  EXPECT_EQ(goals.find("etcd-txn"), std::string::npos) << goals;
}

// The limit line under the etcd W2 goal: what one log-shaped append leaves
// the rest of a hand-off at the goal's rate.
TEST(LoadBenchReport, EtcdW2LimitLineGivesTheHandOffBudgetBesideOneAppend) {
  auto rows = etcd_rows();
  rows.push_back(Row{"W2",
                     1,
                     {{"etcd-txn1", meas(2500, true, 2500, 2500, "")},
                      {"etcd-logtxn1", meas(2250, true, 2250, 2250, "")}}});
  const RatioPair pair{"lh-etcd1", "etcd-mutex1", "etcd-txn1", "etcd-logtxn1"};
  // Goal 0.8 x 2500 = 2000 grants/s: 0.500 ms per hand-off; an append 0.444 ms.
  std::string goals = format_etcd_goals(rows, {pair});
  EXPECT_NE(goals.find("  limit: one log append alone (etcd-logtxn1 at C=1, a txn shaped like leasehold's) 2250 "
                       "appends/s, 0.90x of etcd-txn1; at the goal's 2000 grants/s a hand-off has 0.500 ms, 0.444 "
                       "of them the append, leaving 0.056 ms for the rest of its path (reply, client, node)\n"),
            std::string::npos)
      << goals;
  rows.back().by_target["etcd-logtxn1"].ops_per_s = 1600;  // 0.625 ms > 0.500 ms
  goals = format_etcd_goals(rows, {pair});
  EXPECT_NE(goals.find("0.625 of them the append -> the goal is beyond one log append per hand-off on this etcd\n"),
            std::string::npos)
      << goals;
  // Without the log-shaped target there is no limit line.
  goals = format_etcd_goals(rows, {{"lh-etcd1", "etcd-mutex1", "etcd-txn1"}});
  EXPECT_EQ(goals.find("limit:"), std::string::npos) << goals;
}

}  // namespace
}  // namespace leasehold::bench
