// Unit tests: the etcd log's key, entry and snapshot codec (log/etcd_log_format.h),
// without an etcd server. The hostile cases are the ones fuzz/etcd_log_fuzzer.cc checks.
#include <gtest/gtest.h>

#include <string>

#include "log/etcd_log_format.h"
#include "log/log_format.h"

namespace leasehold::log {
namespace {

TEST(EtcdLogFormat, LogKeyRoundTripsAndRejectsOverflow) {
  EXPECT_EQ(etcd_log_key("/p", 42), "/p/log/00000000000000000042");
  EXPECT_EQ(parse_etcd_log_key("/p", etcd_log_key("/p", 42)), std::optional<LogIndex>(42));
  EXPECT_EQ(parse_etcd_log_key("/p", etcd_log_key("/p", UINT64_MAX)), std::optional<LogIndex>(UINT64_MAX));
  // 20 digits can spell more than 2^64 - 1: such a key used to wrap around to a small index.
  EXPECT_EQ(parse_etcd_log_key("/p", "/p/log/18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_etcd_log_key("/p", "/p/log/99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_etcd_log_key("/p", "/p/log/0000000000000000004x"), std::nullopt);
  EXPECT_EQ(parse_etcd_log_key("/p", "/q/log/00000000000000000042"), std::nullopt);
}

TEST(EtcdLogFormat, EntryRoundTripsAndRejectsABadHeader) {
  const std::string value = encode_etcd_entry(7, "batch");
  auto batch = etcd_entry_batch(value);
  ASSERT_TRUE(batch.is_ok());
  EXPECT_EQ(*batch, "batch");
  EXPECT_EQ(etcd_entry_batch("LHE1short").status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(etcd_entry_batch("XXXX12345678batch").status().code(), ErrorCode::kCorruption);
}

TEST(EtcdLogFormat, SnapshotAssemblesOnlyWhatTheMetaClaims) {
  const std::string bytes = "hello, snapshot";
  const EtcdSnapshotMeta meta{9, 2, bytes.size(), crc32_update(0, bytes)};
  auto decoded = decode_etcd_snapshot_meta(encode_etcd_snapshot_meta(meta), "m");
  ASSERT_TRUE(decoded.is_ok());
  EXPECT_EQ(decoded->index, 9u);
  EXPECT_EQ(decode_etcd_snapshot_meta("LHS1", "m").status().code(), ErrorCode::kCorruption);

  EtcdSnapshotAssembler ok("/p", *decoded);
  ASSERT_TRUE(ok.add(etcd_snapshot_chunk_key("/p", 9, 0), bytes.substr(0, 5)).is_ok());
  ASSERT_TRUE(ok.add(etcd_snapshot_chunk_key("/p", 9, 1), bytes.substr(5)).is_ok());
  auto snap = ok.finish();
  ASSERT_TRUE(snap.is_ok());
  EXPECT_EQ(snap->bytes, bytes);
  EXPECT_EQ(snap->index, 9u);

  EtcdSnapshotAssembler skipped("/p", *decoded);
  EXPECT_EQ(skipped.add(etcd_snapshot_chunk_key("/p", 9, 1), "x").code(), ErrorCode::kCorruption);
  EtcdSnapshotAssembler too_long("/p", *decoded);
  EXPECT_EQ(too_long.add(etcd_snapshot_chunk_key("/p", 9, 0), bytes + "!").code(), ErrorCode::kCorruption);
  EtcdSnapshotAssembler short_one("/p", *decoded);
  ASSERT_TRUE(short_one.add(etcd_snapshot_chunk_key("/p", 9, 0), bytes).is_ok());
  EXPECT_EQ(short_one.finish().status().code(), ErrorCode::kCorruption);  // one chunk of two
}

}  // namespace
}  // namespace leasehold::log
