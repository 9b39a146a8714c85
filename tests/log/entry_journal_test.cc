// The entry journal on its own (log/entry_journal.h): creation, records
// read back after reopen, a torn last record dropped, damage before a later
// record refused, generations, the two header slots, and its limits (whole
// blocks, at most 1 GiB).
#include "log/entry_journal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testkit/temp_dir.h"

namespace leasehold::log {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kBlock = EntryJournal::kBlockBytes;

std::unique_ptr<EntryJournal> open_journal_or_die(const std::string& path, std::size_t bytes = 16 * kBlock,
                                                  LogIndex start = 1) {
  auto j = EntryJournal::open(path, bytes, start);
  EXPECT_TRUE(j.is_ok()) << j.status().to_string();
  return j.is_ok() ? std::move(j.value()) : nullptr;
}

void flip_byte(const std::string& path, std::size_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  const char c = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

// A journal at `path` holding entries 1..last ("entry 1", ...), closed.
void write_numbered(const std::string& path, LogIndex last) {
  auto j = open_journal_or_die(path);
  ASSERT_NE(j, nullptr);
  for (LogIndex i = 1; i <= last; ++i) ASSERT_TRUE(j->append(i, "entry " + std::to_string(i), true).is_ok());
}

TEST(EntryJournal, CreatedZeroFilledAndRecordsComeBackAfterReopen) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  {
    auto j = open_journal_or_die(path, 10 * kBlock + 1, 7);
    ASSERT_NE(j, nullptr);
    EXPECT_EQ(j->size_bytes(), 11 * kBlock);  // rounded up to whole blocks
    EXPECT_EQ(j->next_index(), 7u);
    EXPECT_TRUE(j->take_recovered().entries.empty());
    ASSERT_TRUE(j->append(7, "seven", true).is_ok());
    ASSERT_TRUE(j->append(8, std::string(5000, 'e'), true).is_ok());  // two blocks
    ASSERT_TRUE(j->append(9, "", true).is_ok());
  }
  EXPECT_EQ(fs::file_size(path), 11 * kBlock);  // written in place
  auto j = open_journal_or_die(path);
  ASSERT_NE(j, nullptr);
  const EntryJournal::Recovered r = j->take_recovered();
  EXPECT_EQ(r.start_index, 7u);
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[0], std::make_pair(LogIndex{7}, std::string("seven")));
  EXPECT_EQ(r.entries[1].second, std::string(5000, 'e'));
  EXPECT_EQ(r.entries[2], std::make_pair(LogIndex{9}, std::string()));
  EXPECT_EQ(j->next_index(), 10u);
  ASSERT_TRUE(j->append(10, "ten", true).is_ok());  // continues after them
}

TEST(EntryJournal, ATornLastRecordEndsTheJournal) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  write_numbered(path, 3);
  flip_byte(path, 4 * kBlock + 22);  // the payload of entry 3 (block 4)
  auto j = open_journal_or_die(path);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->take_recovered().entries.size(), 2u);
  EXPECT_EQ(j->next_index(), 3u);
}

TEST(EntryJournal, DamageBeforeALaterRecordFailsNamingBoth) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  write_numbered(path, 4);
  flip_byte(path, 3 * kBlock + 9);  // the index of entry 2 (block 3)
  auto j = EntryJournal::open(path, 16 * kBlock, 1);
  ASSERT_FALSE(j.is_ok());
  EXPECT_EQ(j.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(j.status().message().find("offset " + std::to_string(3 * kBlock) + " (entry 2) is damaged"),
            std::string::npos)
      << j.status().message();
  EXPECT_NE(j.status().message().find("entry 3 follows it"), std::string::npos) << j.status().message();
}

TEST(EntryJournal, ANewGenerationHidesTheOldRecords) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  {
    auto j = open_journal_or_die(path);
    for (LogIndex i = 1; i <= 5; ++i) ASSERT_TRUE(j->append(i, "old " + std::to_string(i), true).is_ok());
    ASSERT_TRUE(j->restart(6).is_ok());
    ASSERT_TRUE(j->append(6, "new 6", true).is_ok());
  }
  auto j = open_journal_or_die(path);
  const EntryJournal::Recovered r = j->take_recovered();
  EXPECT_EQ(r.start_index, 6u);
  ASSERT_EQ(r.entries.size(), 1u);  // old 2..5 still lie behind it, unread
  EXPECT_EQ(r.entries[0].second, "new 6");
}

TEST(EntryJournal, ADamagedNewestHeaderFallsBackToTheOtherSlot) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  {
    auto j = open_journal_or_die(path);
    ASSERT_TRUE(j->append(1, "one", true).is_ok());
    ASSERT_TRUE(j->restart(2).is_ok());  // generation 2, slot 0; torn below
  }
  flip_byte(path, 30);
  auto j = open_journal_or_die(path);
  ASSERT_NE(j, nullptr);
  const EntryJournal::Recovered r = j->take_recovered();
  EXPECT_EQ(r.start_index, 1u);  // generation 1 again, its record intact
  ASSERT_EQ(r.entries.size(), 1u);
  flip_byte(path, kBlock + 30);  // now both slots
  auto none = EntryJournal::open(path, 16 * kBlock, 1);
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(none.status().message().find("neither header block is valid"), std::string::npos);
}

TEST(EntryJournal, SpaceIsCountedInWholeBlocks) {
  leasehold::testing::TempDir dir("journal");
  auto j = open_journal_or_die(dir.file("journal"), 4 * kBlock);  // room for 2 blocks of records
  ASSERT_NE(j, nullptr);
  const std::size_t one_block = kBlock - EntryJournal::kRecordHeaderBytes;
  EXPECT_TRUE(j->fits(2 * kBlock - EntryJournal::kRecordHeaderBytes));
  EXPECT_FALSE(j->fits(2 * kBlock));
  ASSERT_TRUE(j->append(1, std::string(one_block, 'a'), true).is_ok());
  EXPECT_TRUE(j->fits(one_block));
  EXPECT_FALSE(j->fits(one_block + 1));
  EXPECT_TRUE(j->fits_when_empty(one_block + 1));
  ASSERT_TRUE(j->append(2, std::string(one_block, 'b'), true).is_ok());
  EXPECT_FALSE(j->fits(0));
  ASSERT_TRUE(j->restart(3).is_ok());
  EXPECT_TRUE(j->fits(one_block));
}

TEST(EntryJournal, AFileOfTheWrongOrTooLargeSizeIsRefusedAndAStrayTmpRemoved) {
  leasehold::testing::TempDir dir("journal");
  const std::string path = dir.file("journal");
  { std::ofstream(path + ".tmp") << "half-made"; }
  { std::ofstream(path, std::ios::binary) << std::string(2 * kBlock + 10, '\0'); }
  auto j = EntryJournal::open(path, 16 * kBlock, 1);
  ASSERT_FALSE(j.is_ok());
  EXPECT_EQ(j.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(j.status().message().find("not a whole number of at least 3 blocks"), std::string::npos);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::resize_file(path, EntryJournal::kMaxBytes + kBlock);  // sparse: not read, refused first
  auto huge = EntryJournal::open(path, 16 * kBlock, 1);
  ASSERT_FALSE(huge.is_ok());
  EXPECT_NE(huge.status().message().find("a journal may have"), std::string::npos) << huge.status().message();
}

}  // namespace
}  // namespace leasehold::log
