// Streamed snapshots of the embedded log (Log::begin_snapshot_stream and
// friends, log/snapshot_file.h SnapshotFileWriter): the file is the one
// save_snapshot() writes for the pieces joined, a failed or abandoned stream
// leaves the previous snapshot and no .tmp, and a reopen reads it back.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "log/durable_file.h"
#include "log/rocksdb_log.h"
#include "log/snapshot_file.h"
#include "tests/log/log_test_util.h"
#include "testkit/temp_dir.h"

namespace leasehold::log {
namespace {

using testing::append_sync;
using testing::payload_for;
using testing::save_snapshot_sync;
namespace fs = std::filesystem;

std::unique_ptr<Log> open_with_entries(const std::string& dir, LogIndex entries) {
  auto log = open_rocksdb_log({.dir = dir});
  EXPECT_TRUE(log.is_ok()) << log.status().to_string();
  if (!log.is_ok()) return nullptr;
  for (LogIndex i = 1; i <= entries; ++i) EXPECT_TRUE(append_sync(**log, payload_for(i)).is_ok());
  return std::move(log.value());
}

Status stream_sync(Log& log, LogIndex index, const std::vector<std::string>& pieces) {
  log.begin_snapshot_stream(index);
  for (const std::string& piece : pieces) log.add_snapshot_piece(piece);
  std::promise<Status> promise;
  log.finish_snapshot_stream([&promise](Status s) { promise.set_value(std::move(s)); });
  return promise.get_future().get();
}

std::vector<std::string> temp_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tmp") out.push_back(entry.path().string());
  }
  return out;
}

// Pieces of many sizes, 3 MiB in all, with every byte value.
std::vector<std::string> some_pieces() {
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < 24; ++i) {
    std::string piece((i * 7919) % 300'000, '\0');
    for (std::size_t j = 0; j < piece.size(); ++j) piece[j] = static_cast<char>((i * 31 + j) & 0xff);
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

TEST(SnapshotStream, TheFileIsTheOneSaveSnapshotWritesAndSurvivesReopen) {
  leasehold::testing::TempDir streamed("stream"), saved("save");
  const std::vector<std::string> pieces = some_pieces();
  std::string joined;
  for (const std::string& p : pieces) joined += p;
  {
    auto a = open_with_entries(streamed.path(), 10);
    auto b = open_with_entries(saved.path(), 10);
    ASSERT_TRUE(a->streams_snapshots());
    ASSERT_TRUE(stream_sync(*a, 6, pieces).is_ok());
    ASSERT_TRUE(save_snapshot_sync(*b, 6, joined).is_ok());
    EXPECT_EQ(a->position().snapshot, 6u);
    EXPECT_EQ(a->position().first, 7u);
  }
  auto a_file = read_whole_file(snapshot_path(streamed.path(), 6));
  auto b_file = read_whole_file(snapshot_path(saved.path(), 6));
  ASSERT_TRUE(a_file.is_ok() && b_file.is_ok());
  EXPECT_EQ(*a_file, *b_file);
  EXPECT_TRUE(temp_files(streamed.path()).empty());
  auto reopened = open_rocksdb_log({.dir = streamed.path()});
  ASSERT_TRUE(reopened.is_ok()) << reopened.status().to_string();
  auto snap = (*reopened)->load_snapshot();
  ASSERT_TRUE(snap.is_ok() && snap->has_value()) << snap.status().to_string();
  EXPECT_EQ((*snap)->index, 6u);
  EXPECT_EQ((*snap)->bytes, joined);
}

TEST(SnapshotStream, AnIndexOutsideTheLogIsRefusedAndChangesNothing) {
  leasehold::testing::TempDir dir("stream");
  auto log = open_with_entries(dir.path(), 10);
  ASSERT_TRUE(save_snapshot_sync(*log, 4, "state-at-4").is_ok());
  EXPECT_EQ(stream_sync(*log, 11, {"beyond", "the log"}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(stream_sync(*log, 3, {"below"}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(log->position().snapshot, 4u);
  EXPECT_TRUE(temp_files(dir.path()).empty());
  EXPECT_FALSE(fs::exists(snapshot_path(dir.path(), 11)));
  // The log goes on: appends, and a good stream after the refused ones.
  EXPECT_EQ(*append_sync(*log, payload_for(11)), 11u);
  EXPECT_TRUE(stream_sync(*log, 11, {"state-", "at-11"}).is_ok());
  auto snap = log->load_snapshot();
  ASSERT_TRUE(snap.is_ok() && snap->has_value());
  EXPECT_EQ((*snap)->bytes, "state-at-11");
}

TEST(SnapshotStream, AnAbandonedStreamLeavesThePreviousSnapshotAndNoTemp) {
  leasehold::testing::TempDir dir("stream");
  auto log = open_with_entries(dir.path(), 10);
  ASSERT_TRUE(save_snapshot_sync(*log, 4, "state-at-4").is_ok());
  log->begin_snapshot_stream(8);
  log->add_snapshot_piece("half of an ");
  log->abandon_snapshot_stream();
  // Ordered behind the abandon on the log's thread: when this is done, so is it.
  EXPECT_EQ(*append_sync(*log, payload_for(11)), 11u);
  EXPECT_TRUE(temp_files(dir.path()).empty());
  EXPECT_EQ(log->position().snapshot, 4u);
  ASSERT_TRUE(save_snapshot_sync(*log, 8, "state-at-8").is_ok());
  log.reset();
  auto reopened = open_rocksdb_log({.dir = dir.path()});
  ASSERT_TRUE(reopened.is_ok());
  auto snap = (*reopened)->load_snapshot();
  ASSERT_TRUE(snap.is_ok() && snap->has_value());
  EXPECT_EQ((*snap)->bytes, "state-at-8");
}

TEST(SnapshotStream, AStreamLeftOpenAtCloseLeavesNoTemp) {
  leasehold::testing::TempDir dir("stream");
  {
    auto log = open_with_entries(dir.path(), 3);
    log->begin_snapshot_stream(2);
    log->add_snapshot_piece("never finished");
  }
  EXPECT_TRUE(temp_files(dir.path()).empty());
  auto reopened = open_rocksdb_log({.dir = dir.path()});
  ASSERT_TRUE(reopened.is_ok());
  EXPECT_EQ((*reopened)->position().snapshot, 0u);
  EXPECT_EQ((*reopened)->position().last, 3u);
}

// A directory that refuses the file: the error names it and arrives with
// finish; the log and its previous snapshot are intact.
TEST(SnapshotStream, AFileThatCannotBeCreatedIsReportedAtFinish) {
  leasehold::testing::TempDir dir("stream");
  auto log = open_with_entries(dir.path(), 5);
  ASSERT_TRUE(save_snapshot_sync(*log, 2, "state-at-2").is_ok());
  // A directory where the .tmp file would go makes its creation fail.
  fs::create_directory(snapshot_path(dir.path(), 5) + ".tmp");
  const Status st = stream_sync(*log, 5, {"x"});
  EXPECT_EQ(st.code(), ErrorCode::kIoError);
  EXPECT_NE(st.message().find("snapshot-"), std::string::npos) << st.to_string();
  EXPECT_EQ(log->position().snapshot, 2u);
  fs::remove(snapshot_path(dir.path(), 5) + ".tmp");
  EXPECT_TRUE(stream_sync(*log, 5, {"state-at-5"}).is_ok());
}

}  // namespace
}  // namespace leasehold::log
