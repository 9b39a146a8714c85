// The revision record's files: round trip, damage detection, and the two
// copies standing in for each other.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "log/revision_record.h"
#include "testkit/temp_dir.h"

namespace leasehold::log {
namespace {

using State = LoadedRevisionRecord::State;

TEST(RevisionRecordFile, RoundTripAndDamage) {
  RevisionRecord r{1 << 20, 77, 3000, 0, false};
  r.lease = true;
  auto back = decode_revision_record(encode_revision_record(r));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(*back, r);
  std::string bytes = encode_revision_record(r);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
    EXPECT_FALSE(decode_revision_record(flipped)) << "byte " << i;
  }
  EXPECT_FALSE(decode_revision_record(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(decode_revision_record(""));
}

TEST(RevisionRecordFile, TwoCopiesStandInForEachOther) {
  leasehold::testing::TempDir dir("revision-record");
  auto none = load_revision_record(dir.path());
  ASSERT_TRUE(none);
  EXPECT_EQ(none->state, State::kAbsent);

  const RevisionRecord r{200, 150, 10, 0, false};
  ASSERT_TRUE(store_revision_record(dir.path(), r));
  auto both = load_revision_record(dir.path());
  ASSERT_TRUE(both);
  EXPECT_EQ(both->state, State::kValid);
  EXPECT_EQ(both->record, r);
  EXPECT_TRUE(both->problems.empty());

  std::filesystem::remove(revision_record_path_a(dir.path()));
  auto one = load_revision_record(dir.path());
  ASSERT_TRUE(one);
  EXPECT_EQ(one->state, State::kValid);
  EXPECT_EQ(one->record, r);
  ASSERT_EQ(one->problems.size(), 1U);
  EXPECT_NE(one->problems[0].find("revision-record.a is missing"), std::string::npos);

  std::ofstream(revision_record_path_b(dir.path()), std::ios::trunc) << "x";
  auto bad = load_revision_record(dir.path());
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->state, State::kCorrupt);

  // A newer record in one copy wins over an older one in the other.
  ASSERT_TRUE(store_revision_record(dir.path(), r));
  const RevisionRecord newer{400, 300, 10, 0, false};
  std::ofstream(revision_record_path_a(dir.path()), std::ios::binary | std::ios::trunc)
      << encode_revision_record(newer);
  auto mixed = load_revision_record(dir.path());
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->record, newer);
}

}  // namespace
}  // namespace leasehold::log
