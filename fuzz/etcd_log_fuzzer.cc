// fuzz/etcd_log_fuzzer.cc: libFuzzer target for the etcd log's entry and
// snapshot decoding (log/etcd_log_format.h), without an etcd server.
//
// Input: byte 0 % 3 picks the decoder; the rest is its input.
//   0  an entry value ("LHE1" + term + batch): the batch must re-encode to
//      the same value, and a batch that decodes is applied to a real state
//      machine with the fencing checks of fuzz_support.h;
//   1  a log key under prefix "/lh": a key that parses must be exactly the
//      key of its index (no overflow, no second spelling);
//   2  a snapshot: [meta value, 28 bytes][chunks...], each chunk
//      [key skew, 1 byte][length, 2 bytes LE][bytes]; the chunk is offered
//      under the key of chunk number (position + skew). With byte 0 bit 2
//      set the target rewrites the meta's count, length and crc32 to match
//      the chunks, so mutations reach a complete snapshot, which must be the
//      concatenation of the chunks and is then restored by the state machine.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "log/etcd_log_format.h"
#include "log/log_format.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

constexpr std::string_view kPrefix = "/lh";

void entry(std::string_view value) {
  auto batch = log::etcd_entry_batch(value);
  if (!batch) {
    FUZZ_CHECK(batch.status().code() == ErrorCode::kCorruption);
    return;
  }
  const auto term = static_cast<std::int64_t>(log::get_u64_le(value.substr(4)));
  FUZZ_CHECK(log::encode_etcd_entry(term, *batch) == value);
  auto commands = core::decode_batch(*batch);
  if (!commands) return;
  fuzz::check_codec_round_trip(*commands);
  core::StateMachine sm;
  for (const core::Command& c : *commands) fuzz::apply_checked(sm, c);
}

void key(std::string_view k) {
  const auto index = log::parse_etcd_log_key(kPrefix, k);
  if (index) FUZZ_CHECK(log::etcd_log_key(kPrefix, *index) == k);
}

void snapshot(std::string_view in, bool fix_meta) {
  const std::string_view meta_bytes = in.substr(0, log::kEtcdSnapshotMetaBytes);
  std::vector<std::pair<std::uint8_t, std::string_view>> chunks;
  std::string whole;
  for (std::size_t pos = meta_bytes.size(); pos + 3 <= in.size() && chunks.size() < 64;) {
    const auto skew = static_cast<std::uint8_t>(in[pos]);
    const std::size_t len = static_cast<std::uint8_t>(in[pos + 1]) |
                            (static_cast<std::size_t>(static_cast<std::uint8_t>(in[pos + 2])) << 8);
    const std::string_view bytes = in.substr(pos + 3, len);
    chunks.emplace_back(skew, bytes);
    whole += bytes;
    pos += 3 + bytes.size();
  }
  auto meta = log::decode_etcd_snapshot_meta(meta_bytes, log::meta_key(kPrefix));
  if (!meta) return;
  if (fix_meta) {
    meta->chunks = static_cast<std::uint32_t>(chunks.size());
    meta->total_bytes = whole.size();
    meta->crc = log::crc32_update(0, whole);
    auto again = log::decode_etcd_snapshot_meta(log::encode_etcd_snapshot_meta(*meta), log::meta_key(kPrefix));
    FUZZ_CHECK(again.is_ok() && again->index == meta->index && again->crc == meta->crc);
  }
  log::EtcdSnapshotAssembler assembler(kPrefix, *meta);
  std::uint32_t n = 0;
  for (const auto& [skew, bytes] : chunks) {
    const std::string k = log::etcd_snapshot_chunk_key(kPrefix, meta->index, n + skew);
    if (!assembler.add(k, bytes)) return;
    ++n;
  }
  auto snap = assembler.finish();
  if (!snap) return;
  FUZZ_CHECK(snap->index == meta->index && snap->bytes == whole);
  auto restored = core::StateMachine::restore(snap->bytes);
  if (restored) fuzz::check_snapshot_round_trip(*restored);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: entry(rest); break;
    case 1: key(rest); break;
    default: snapshot(rest, (data[0] & 4U) != 0); break;
  }
  return 0;
}
