// tests/torture/history_writer_test.cc: torture/history.h's writer: records
// read back as written, and a write the disk refuses stops the process
// instead of leaving a history that silently lacks an operation.
#include <gtest/gtest.h>

#include <string>

#include "testkit/temp_dir.h"
#include "torture/history.h"

namespace leasehold::torture {
namespace {

Op sample(std::int64_t token) {
  Op op;
  op.op = "acquire";
  op.process = 3;
  op.key = "lock-a";
  op.mode = "exclusive";
  op.inv = 100 + token;
  op.cmp = 200 + token;
  op.out = Outcome::kOk;
  op.token = token;
  return op;
}

TEST(TortureHistoryWriter, RecordsReadBackAsWritten) {
  leasehold::testing::TempDir dir{"history"};
  const std::string path = dir.file("h.jsonl");
  {
    auto w = HistoryWriter::open(path);
    ASSERT_TRUE(w.is_ok()) << w.status().to_string();
    (*w)->write(sample(7));
    (*w)->write(sample(8));
  }
  auto ops = read_history(path);
  ASSERT_TRUE(ops.is_ok()) << ops.status().to_string();
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].token, 7);
  EXPECT_EQ((*ops)[1].token, 8);
  EXPECT_EQ((*ops)[1].key, "lock-a");
  EXPECT_EQ((*ops)[1].out, Outcome::kOk);
}

TEST(TortureHistoryWriterDeathTest, AWriteTheDiskRefusesStopsTheProcess) {
  // /dev/full accepts the open and fails every flush with ENOSPC.
  auto w = HistoryWriter::open("/dev/full");
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  EXPECT_DEATH((*w)->write(sample(1)), "history write failed");
}

}  // namespace
}  // namespace leasehold::torture
