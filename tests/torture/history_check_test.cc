// tests/torture/history_check_test.cc: a run's history is checked whatever
// happened to the run (torture/history_check.h): a history cut short (no
// final crash, no liveness records, a last line cut mid-write) is still
// checked for safety, and a line that does not parse fails the run with
// its file and line number instead of being skipped.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testkit/temp_dir.h"
#include "tests/torture/history_builder.h"
#include "torture/history_check.h"
#include "torture/run.h"

namespace leasehold::torture {
namespace {

using testing::acquire;
using testing::hold;

void write_lines(const std::string& path, const std::vector<Op>& ops, const std::string& tail = "") {
  std::ofstream out(path, std::ios::trunc);
  for (const Op& op : ops) out << to_json(op) << "\n";
  out << tail;
}

bool has_check(const std::vector<Violation>& v, const std::string& check, const std::string& text = "") {
  for (const Violation& x : v) {
    if (x.check == check && x.message.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(TortureHistoryCheck, AHistoryThatStoppedEarlyIsStillCheckedForSafety) {
  leasehold::testing::TempDir dir{"history-check"};
  // Two workers overlap on x0; the run stopped before its final crash and
  // liveness checks (the harness wrote nothing), and worker 1 was killed
  // mid-line.
  write_lines(dir.file("worker-0.jsonl"), {acquire(0, "x0", 0, 5, 1), hold(0, "x0", 5, 50, 1)});
  write_lines(dir.file("worker-1.jsonl"), {acquire(1, "x0", 10, 20, 2), hold(1, "x0", 20, 60, 2)},
              "{\"op\":\"release\",\"p\":1,\"ke");
  auto checked = check_history_files(
      {dir.file("harness.jsonl"), dir.file("worker-0.jsonl"), dir.file("worker-1.jsonl")});
  ASSERT_TRUE(checked.is_ok()) << checked.status().to_string();
  EXPECT_EQ(checked->ops, 2u);
  EXPECT_TRUE(has_check(checked->violations, "mutual-exclusion", "x0")) << checked->violations.size();
  EXPECT_TRUE(has_check(checked->violations, kUnparsableHistory, "worker-1.jsonl:3:"));
}

TEST(TortureHistoryCheck, AnUnparsableLineFailsTheRunWithItsLineNumber) {
  leasehold::testing::TempDir dir{"history-check"};
  const std::string path = dir.file("worker-0.jsonl");
  write_lines(path, {acquire(0, "x0", 0, 5, 1)}, "not json\n" + to_json(hold(0, "x0", 5, 10, 1)) + "\n");
  auto checked = check_history_files({path});
  ASSERT_TRUE(checked.is_ok());
  ASSERT_EQ(checked->violations.size(), 1u);
  EXPECT_EQ(checked->violations[0].check, kUnparsableHistory);
  EXPECT_NE(checked->violations[0].message.find(path + ":2: history line"), std::string::npos)
      << checked->violations[0].message;
  EXPECT_EQ(checked->history.size(), 2u);  // the lines around it are checked
  // `leasehold-torture check` of a kept history reports it the same way.
  auto replay = check_file(path);
  ASSERT_TRUE(replay.is_ok());
  EXPECT_TRUE(has_check(replay.value(), kUnparsableHistory, ":2:"));
  // A caller that does not collect bad lines gets an error naming the line.
  auto strict = read_history(path);
  ASSERT_FALSE(strict.is_ok());
  EXPECT_NE(strict.status().message().find(path + ":2:"), std::string::npos) << strict.status().to_string();
}

TEST(TortureHistoryCheck, AGoodHistoryHasNoViolationAndAMissingFileIsSkipped) {
  leasehold::testing::TempDir dir{"history-check"};
  write_lines(dir.file("worker-0.jsonl"), {acquire(0, "x0", 0, 5, 1), hold(0, "x0", 5, 50, 1)});
  auto checked = check_history_files({dir.file("worker-0.jsonl"), dir.file("never-started.jsonl")});
  ASSERT_TRUE(checked.is_ok());
  EXPECT_TRUE(checked->violations.empty());
  EXPECT_FALSE(check_file(dir.file("never-started.jsonl")).is_ok());
}

}  // namespace
}  // namespace leasehold::torture
