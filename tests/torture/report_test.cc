// tests/torture/report_test.cc: the report of many runs (torture/report.h):
// a run's summary line read back gives the same totals, and the markdown
// names each fault by mode, the kinds never injected, failing seeds and notes.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "torture/report.h"

namespace leasehold::torture {
namespace {

RunResult run_with(std::uint64_t seed, std::map<std::string, int> faults, std::size_t ops) {
  RunResult r;
  r.seed = seed;
  r.clock = "none";
  r.ops = ops;
  r.faults = std::move(faults);
  return r;
}

TEST(TortureReport, SummaryLinesGiveTheSameTotalsAsTheRuns) {
  const RunResult a = run_with(7, {{"kill", 2}, {"partition", 1}}, 100);
  RunResult b = run_with(8, {{"kill-primary", 1}, {"kill-standby:error", 1}}, 50);
  b.violations.push_back({"fencing", "x0: token 3 after 5"});
  Totals direct;
  direct.add("embedded", a);
  direct.add("cluster-1etcd", b);
  Totals read;
  ASSERT_TRUE(add_summary_line(read, summary_line("embedded", a, 12.5)));
  ASSERT_TRUE(add_summary_line(read, summary_line("cluster-1etcd", b, 20.0)));
  EXPECT_EQ(read.runs, direct.runs);
  EXPECT_EQ(read.ops, direct.ops);
  EXPECT_EQ(read.faults, direct.faults);
  EXPECT_EQ(read.faults_by_mode, direct.faults_by_mode);
  EXPECT_EQ(read.violations_by_mode, direct.violations_by_mode);
  EXPECT_EQ(read.violations_by_check, direct.violations_by_check);
  EXPECT_DOUBLE_EQ(read.seconds, 32.5);
}

TEST(TortureReport, MarkdownShowsFaultsByModeAndTheKindsNeverInjected) {
  Totals t;
  ASSERT_TRUE(add_summary_line(t, summary_line("embedded", run_with(1, {{"kill", 3}}, 10), 1)));
  ASSERT_TRUE(add_summary_line(t, summary_line("cluster-3etcd", run_with(2, {{"kill-primary", 2}, {"pause-primary", 1}}, 10), 1)));
  ASSERT_TRUE(add_summary_line(t, start_error_line("cluster-1etcd", 3, "unavailable: no primary")));
  ASSERT_TRUE(add_summary_line(t, summary_line("embedded-lease", run_with(4, {{"kill", 1}}, 10), 1)));
  const std::string md = render_markdown(t, "leasehold-torture report", "Earlier: 294 runs.\n");
  // Columns: total, embedded, embedded-lease, cluster-1etcd, cluster-3etcd.
  EXPECT_NE(md.find("| kill | 4 | 3 | 1 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| kill-primary | 2 | 0 | 0 | 0 | 2 |"), std::string::npos) << md;
  // kill and pause-server were injected (pause-primary is pause-server in a cluster); partition was not.
  const auto never = md.find("Fault kinds never injected");
  ASSERT_NE(never, std::string::npos) << md;
  const std::string never_line = md.substr(never, md.find('\n', never) - never);
  EXPECT_NE(never_line.find("`partition`"), std::string::npos);
  EXPECT_EQ(never_line.find("`kill`"), std::string::npos);
  EXPECT_EQ(never_line.find("`pause-server`"), std::string::npos);
  EXPECT_EQ(never_line.find("`none`"), std::string::npos);
  EXPECT_NE(md.find("1 runs could not run to the end"), std::string::npos);
  EXPECT_NE(md.find("seed 3 (cluster-1etcd): could not run to the end: unavailable: no primary"), std::string::npos);
  EXPECT_NE(md.find("## Notes\n\nEarlier: 294 runs.\n"), std::string::npos);
}

// A markdown table whose delimiter row has fewer cells than its header is
// not a table at all to a renderer; every table here must match.
TEST(TortureReport, EveryTablesDelimiterRowHasAsManyCellsAsItsHeader) {
  Totals t;
  ASSERT_TRUE(add_summary_line(t, summary_line("embedded", run_with(1, {{"kill", 3}}, 10), 1)));
  RunResult failed = run_with(2, {{"partition", 1}}, 10);
  failed.violations.push_back({"fencing", "x0: token 3 after 5"});
  ASSERT_TRUE(add_summary_line(t, summary_line("cluster-1etcd", failed, 1)));
  const std::string md = render_markdown(t, "leasehold-torture report", "");
  std::istringstream in(md);
  std::string previous;
  std::string line;
  int tables = 0;
  const auto cells = [](const std::string& row) { return std::count(row.begin(), row.end(), '|') - 1; };
  while (std::getline(in, line)) {
    if (line.rfind("|-", 0) == 0 || line.rfind("|:-", 0) == 0) {
      ++tables;
      EXPECT_EQ(cells(line), cells(previous)) << "header: " << previous << "\ndelimiter: " << line;
    }
    previous = line;
  }
  EXPECT_GE(tables, 4) << md;
}

TEST(TortureReport, ALineThatIsNotASummaryIsRefused) {
  Totals t;
  EXPECT_FALSE(add_summary_line(t, "{\"op\":\"acquire\"}"));
  EXPECT_FALSE(add_summary_line(t, "not json"));
  EXPECT_EQ(t.runs, 0);
}

}  // namespace
}  // namespace leasehold::torture
