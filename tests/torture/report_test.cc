// tests/torture/report_test.cc: the torture record (torture/report.h,
// run_summary.h, totals_file.h): runs fold into the aggregate through their
// summary lines, the totals and the commit/date range add up across a
// rewrite of the aggregate file, stopped-early runs and liveness findings
// are counted apart, a malformed aggregate or summary line is refused with
// an error naming what is wrong, and the page's sections are rewritten in
// place.
#include <gtest/gtest.h>

#include <string>

#include "torture/report.h"
#include "torture/run_summary.h"
#include "torture/totals_file.h"

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

// A run through its summary line, as `report` reads it back.
RunSummary line_of(const RunSummary& s) {
  auto parsed = parse_summary_line(summary_line(s));
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  return parsed.is_ok() ? parsed.value() : RunSummary{};
}

TEST(TortureReport, RunsFoldIntoTotalsPerModeAndFaultKind) {
  RunResult b = run_with(8, {{"kill-primary", 1}, {"kill", 2}}, 50);
  b.violations.push_back({"fencing", "x0: token 3 after 5"});
  b.violations.push_back({"fencing", "x0: token 4 after 5"});
  Totals t;
  const RunResult a = run_with(7, {{"kill", 2}, {"partition", 1}}, 100);
  t.add(line_of(summarize("embedded", a, 12.5, "abc", "2026-12-08T10:00:00Z")));
  t.add(line_of(summarize("cluster-1etcd", b, 20.0, "def", "2026-12-08T11:00:00Z")));
  EXPECT_EQ(t.all().runs, 2);
  EXPECT_EQ(t.all().ops, 150u);
  EXPECT_EQ(t.all().ms, 32'500);
  EXPECT_EQ(t.all().violations, 2);
  EXPECT_EQ(t.modes.at("embedded").violations, 0);
  EXPECT_EQ(t.modes.at("cluster-1etcd").violations, 2);
  const FaultTotals& kill = t.faults.at("kill");
  EXPECT_EQ(kill.injected, 4);
  EXPECT_EQ(kill.runs, 2);
  EXPECT_EQ(kill.ops, 150u);
  EXPECT_EQ(kill.violations, 2);
  EXPECT_EQ(kill.by_mode.at("embedded"), 2);
  EXPECT_EQ(kill.by_mode.at("cluster-1etcd"), 2);
  EXPECT_EQ(t.faults.at("partition").runs, 1);
  EXPECT_EQ(t.faults.at("partition").violations, 0);
  EXPECT_EQ(t.checks.at("fencing"), 2);
  EXPECT_EQ(t.clocks.at("none"), 2);
}

TEST(TortureReport, TheCommitAndDateRangeCoversEveryRunFolded) {
  Totals t;
  t.add(summarize("embedded", run_with(1, {}, 1), 1, "b2", "2026-12-08T10:00:00Z"));
  t.add(summarize("embedded", run_with(2, {}, 1), 1, "a1", "2026-12-07T09:00:00Z"));
  t.add(summarize("embedded", run_with(3, {}, 1), 1, "c3", "2026-12-09T08:00:00Z"));
  EXPECT_EQ(t.first.commit, "a1");
  EXPECT_EQ(t.first.date, "2026-12-07T09:00:00Z");
  EXPECT_EQ(t.last.commit, "c3");
  EXPECT_EQ(t.last.date, "2026-12-09T08:00:00Z");
  const std::string md = render_markdown(t);
  EXPECT_NE(md.find("Runs from 2026-12-07 (commit a1) to 2026-12-09 (commit c3)."), std::string::npos) << md;
}

TEST(TortureReport, StoppedEarlyRunsCountTheirViolationsAndNoPrimaryIsAFindingOfItsOwn) {
  RunResult stopped = run_with(5, {{"kill-primary", 1}}, 40);
  stopped.stopped_early = "no primary after the final crash: unavailable: no primary after the final crash";
  stopped.no_primary = "unavailable: no primary after the final crash";
  stopped.violations.push_back({"mutual-exclusion", "x0 overlap"});
  Totals t;
  t.add(line_of(summarize("cluster-3etcd", stopped, 15, "abc", "2026-12-08T10:00:00Z")));
  t.add(line_of(unchecked_run("cluster-3etcd", 6, "unavailable: the cluster did not start", "abc",
                              "2026-12-08T10:01:00Z")));
  const ModeTotals& m = t.modes.at("cluster-3etcd");
  EXPECT_EQ(m.runs, 1);  // the unchecked one is not a checked run
  EXPECT_EQ(m.ops, 40u);
  EXPECT_EQ(m.violations, 1);
  EXPECT_EQ(m.stopped_early, 1);
  EXPECT_EQ(m.no_primary, 1);
  EXPECT_EQ(m.not_checked, 1);
  EXPECT_EQ(t.checks.at("mutual-exclusion"), 1);
  const std::string md = render_markdown(t);
  EXPECT_NE(md.find("| cluster-3etcd | 1 | 40 | 1 | 1 | 1 | 1 |"), std::string::npos) << md;
}

TEST(TortureReport, TheAggregateFileRoundTripsAndAddsUpAcrossRewrites) {
  Totals first;
  first.add(summarize("embedded", run_with(1, {{"kill", 3}}, 10), 2, "a1", "2026-12-07T09:00:00Z"));
  // Another tool's section must survive the rewrite untouched.
  const std::string other = "{\"format\": 1, \"fuzz\": {\"targets\": {\"x\": {\"runs\": 1}}}}";
  auto text = write_totals(other, first);
  ASSERT_TRUE(text.is_ok()) << text.status().to_string();
  EXPECT_NE(text->find("\"fuzz\": {\n  \"targets\": {\n   \"x\": {\"runs\":1}\n  }\n }"), std::string::npos) << *text;
  // One level-3 object a line: the file stays a few dozen lines.
  EXPECT_NE(text->find("   \"embedded\": {\"ms\":2000,\"no_primary\":0,\"not_checked\":0,\"operations\":10,\"runs\":1,"
                       "\"stopped_early\":0,\"violations\":0}"),
            std::string::npos)
      << *text;

  // A second clone reads it back and folds its own runs in.
  auto read = parse_totals(text.value());
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  Totals second = read.value();
  EXPECT_EQ(second.modes.at("embedded").runs, 1);
  EXPECT_EQ(second.faults.at("kill").injected, 3);
  RunResult bad = run_with(2, {{"kill", 1}}, 5);
  bad.violations.push_back({"durability", "lost"});
  second.add(summarize("embedded", bad, 1, "b2", "2026-12-08T09:00:00Z"));
  auto again = write_totals(text.value(), second);
  ASSERT_TRUE(again.is_ok());
  auto reread = parse_totals(again.value());
  ASSERT_TRUE(reread.is_ok()) << reread.status().to_string();
  EXPECT_EQ(reread->modes.at("embedded").runs, 2);
  EXPECT_EQ(reread->modes.at("embedded").ops, 15u);
  EXPECT_EQ(reread->modes.at("embedded").violations, 1);
  EXPECT_EQ(reread->faults.at("kill").injected, 4);
  EXPECT_EQ(reread->faults.at("kill").violations, 1);
  EXPECT_EQ(reread->checks.at("durability"), 1);
  EXPECT_EQ(reread->first.commit, "a1");
  EXPECT_EQ(reread->last.commit, "b2");
  EXPECT_EQ(reread->last.date, "2026-12-08T09:00:00Z");
  // Writing what was read changes nothing.
  EXPECT_EQ(write_totals(again.value(), reread.value()).value(), again.value());
}

TEST(TortureReport, AMalformedAggregateIsRefusedNamingWhatIsWrong) {
  Totals t;
  t.add(summarize("embedded", run_with(1, {{"kill", 3}}, 10), 2, "a1", "2026-12-07T09:00:00Z"));
  const std::string good = write_totals("", t).value();
  auto refused = [](const std::string& text, const std::string& expected) {
    auto r = parse_totals(text);
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(expected), std::string::npos) << r.status().message();
    EXPECT_FALSE(write_totals(text, Totals{}).is_ok()) << "a malformed file was rewritten";
  };
  refused("{not json", "not JSON");
  refused("[1, 2]", "not a JSON object");
  refused("{\"torture\": {}}", "format");
  refused("{\"format\": 2}", "format");
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  refused(replace("\"not_checked\":0,\"operations\":10,\"runs\":1", "\"not_checked\":0,\"operations\":10,\"runs\":-1"),
          "torture.modes.embedded.runs");
  refused(replace("\"not_checked\":0,\"operations\":10,\"runs\":1", "\"not_checked\":0,\"operations\":10"),
          "torture.modes.embedded.runs: missing");
  refused(replace("\"injected\":3", "\"injected\":\"3\""), "torture.faults.kill.injected");
  refused(replace("\"unchecked_keys\": 0", "\"unchecked_keys\": 0.5"), "torture.unchecked_keys");
  refused(replace("\"commit\": \"a1\"", "\"commit\": 7"), "torture.first.commit");
}

TEST(TortureReport, AMalformedSummaryLineIsRefused) {
  EXPECT_FALSE(parse_summary_line("garbage").is_ok());
  EXPECT_FALSE(parse_summary_line("{\"checked\":true,\"mode\":\"embedded\"}").is_ok());
  auto wrong = parse_summary_line(
      "{\"checked\":true,\"mode\":\"embedded\",\"seed\":1,\"commit\":\"a\",\"date\":\"d\",\"clock\":\"none\","
      "\"operations\":-3,\"ms\":1,\"violations\":{},\"faults\":{},\"unchecked_keys\":0,\"stopped_early\":\"\","
      "\"no_primary\":\"\"}");
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("operations"), std::string::npos) << wrong.status().message();
}

TEST(TortureReport, MarkdownShowsFaultsByModeAndTheKindsNeverInjected) {
  Totals t;
  t.add(summarize("embedded", run_with(1, {{"kill", 3}}, 10), 1, "a", "2026-12-07T09:00:00Z"));
  t.add(summarize("cluster-3etcd", run_with(2, {{"kill-primary", 2}, {"pause-primary", 1}}, 10), 1, "a",
                  "2026-12-07T09:00:00Z"));
  t.add(unchecked_run("cluster-1etcd", 3, "unavailable: the cluster did not start", "a", "2026-12-07T09:00:00Z"));
  t.add(summarize("embedded-lease", run_with(4, {{"kill", 1}}, 10), 1, "a", "2026-12-07T09:00:00Z"));
  const std::string md = render_markdown(t);
  // Columns: injected, embedded, embedded-lease, cluster-1etcd, cluster-3etcd, runs, operations, violations.
  EXPECT_NE(md.find("| kill | 4 | 3 | 1 | 0 | 0 | 2 | 20 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| kill-primary | 2 | 0 | 0 | 0 | 2 | 1 | 10 | 0 |"), std::string::npos) << md;
  const auto never = md.find("Fault kinds never injected");
  ASSERT_NE(never, std::string::npos) << md;
  const std::string never_line = md.substr(never, md.find('\n', never) - never);
  EXPECT_NE(never_line.find("`partition`"), std::string::npos);
  EXPECT_EQ(never_line.find("`kill`"), std::string::npos);
  EXPECT_EQ(never_line.find("`pause-server`"), std::string::npos);  // pause-primary is pause-server in a cluster
  EXPECT_EQ(never_line.find("`none`"), std::string::npos);
  EXPECT_NE(md.find("| cluster-1etcd | 0 | 0 | 0 | 0 | 0 | 1 |"), std::string::npos) << md;
}

TEST(TortureReport, ASectionOfThePageIsRewrittenInPlace) {
  const std::string page = "# Title\n\nintro\n\n<!-- begin torture -->\nold\n<!-- end torture -->\n\n"
                           "<!-- begin fuzz -->\nfuzz table\n<!-- end fuzz -->\n";
  const std::string out = replace_section(page, "torture", "new\n");
  EXPECT_EQ(out, "# Title\n\nintro\n\n<!-- begin torture -->\nnew\n<!-- end torture -->\n\n"
                 "<!-- begin fuzz -->\nfuzz table\n<!-- end fuzz -->\n");
  // A page without the section gets it at the end.
  EXPECT_EQ(replace_section("# Title\n", "stress", "s"), "# Title\n\n<!-- begin stress -->\ns\n<!-- end stress -->\n");
}

}  // namespace
}  // namespace leasehold::torture
