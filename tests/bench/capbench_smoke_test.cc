// Smoke test of the capacity benchmark (bench/capacity): runs
// build/bench/leasehold_capbench with 2,000 sessions, short phases and both
// restarts against a real `leasehold server`, and checks that every phase ran
// and the sessions survived both restarts, so the tool cannot rot silently.
// Not a performance test: no rate, size or stall is judged.
#include <gtest/gtest.h>

#include <string>

#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {
namespace {

TEST(CapBenchSmoke, EveryPhaseRunsAndSessionsSurviveRestarts) {
  TempDir dir("capbench");
  SpawnOptions opt;
  opt.stdout_path = dir.file("out");
  opt.stderr_path = dir.file("err");
  auto tool = Subprocess::spawn(
      {build_dir() + "/bench/leasehold_capbench", "--leasehold", build_dir() + "/leasehold", "--work-dir",
       dir.path(), "--sessions", "2000", "--keepalive-connections", "20", "--keepalive-threads", "2",
       "--keepalive-ms", "300", "--after-restart-ms", "200", "--restarts", "term,kill", "--phase-timeout-s", "60"},
      opt);
  ASSERT_TRUE(tool.is_ok()) << tool.status().to_string();
  auto code = tool->wait(std::chrono::seconds(100));
  if (!code) tool->kill9();
  ASSERT_EQ(code, 0) << read_file(dir.file("out")) << read_file(dir.file("err"));
  std::string out = read_file(dir.file("out"));
  for (const char* phase : {"idle (probe noise)", "open", "keepalive", "restart (term)", "restart (kill)"}) {
    EXPECT_NE(out.find(phase), std::string::npos) << phase << "\n" << out;
  }
  EXPECT_NE(out.find("(2000 in "), std::string::npos) << out;
  EXPECT_NE(out.find("INFO sessions 2000;"), std::string::npos) << out;
  // Both restarts came back with every session (the tool checks and says so).
  EXPECT_EQ(out.find("sessions lost"), std::string::npos) << out;
  std::size_t restarted = 0;
  for (auto at = out.find("(INFO sessions 2000, replayed"); at != std::string::npos;
       at = out.find("(INFO sessions 2000, replayed", at + 1)) {
    ++restarted;
  }
  EXPECT_EQ(restarted, 2u) << "two restarts in the table\n" << out;
  EXPECT_NE(out.find("keepalives/s from 20 conns"), std::string::npos) << out;
  EXPECT_NE(out.find("10M sessions under 1.5 GB RSS: n/a"), std::string::npos) << out;
  EXPECT_NE(out.find("no event-loop stall over 10 ms"), std::string::npos) << out;
  // The long turns are sorted by cause from the server's INFO (read, not n/a).
  EXPECT_NE(out.find("the others: slept / waited for a core"), std::string::npos) << out;
  EXPECT_NE(out.find("turns over 10 ms were long (every phase): "), std::string::npos) << out;
  EXPECT_NE(out.find("no stall of the server's own over 10 ms (turns over 10 ms that did not only wait for a core): "),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace leasehold::testing
