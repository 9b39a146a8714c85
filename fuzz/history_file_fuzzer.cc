// fuzz/history_file_fuzzer.cc: libFuzzer target for the audit history's
// segment files (server/observability/history_store.h, parse_history_segment).
//
// Input: byte 0 bit 0 set: the rest is a history file as found on disk.
// Clear: the rest is [u8 records][u8 kind][u16 LE lock length, lock]... then
// [u32 LE offset, u8 xor]...: the target writes a valid file holding those
// records (ids 1, 2, ...), then flips the given bytes, so mutations reach the
// records behind the checksums instead of failing the header.
// Properties: parsing never crashes and fails only with kCorruption; the
// sound bytes end inside the input, and `torn` says whether any follow; every
// record returned has an id and a known kind; and from a file this target
// wrote, the records returned are the first ones written, field for field
// (damage ends the file, it is never read back as other records).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "log/log_format.h"
#include "server/observability/history_store.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

constexpr std::string_view kHeader = "leasehold-history-v1\n";

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffU));
}

void check_shape(const server::HistorySegment& seg, std::size_t size) {
  FUZZ_CHECK(seg.good <= size);
  FUZZ_CHECK(seg.torn == (seg.good < size));
  FUZZ_CHECK(size == 0 || seg.good >= kHeader.size());
  for (const server::HistoryRecord& r : seg.records) {
    FUZZ_CHECK(r.id != 0);
    FUZZ_CHECK(static_cast<std::uint8_t>(r.event.kind) <= server::kAuditKindMax);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1U) != 0) {
    auto parsed = server::parse_history_segment("history.log", in);
    if (!parsed) {
      FUZZ_CHECK(parsed.status().code() == ErrorCode::kCorruption);
      return 0;
    }
    check_shape(*parsed, in.size());
    return 0;
  }

  if (in.empty()) return 0;
  const std::size_t records = static_cast<std::uint8_t>(in[0]) % 16;
  in.remove_prefix(1);
  std::vector<server::HistoryRecord> written;
  std::string file(kHeader);
  for (std::size_t i = 0; i < records && in.size() >= 3; ++i) {
    server::HistoryRecord r;
    r.id = i + 1;
    r.wall_ms = static_cast<std::int64_t>(1'700'000'000'000 + i);
    r.log_index = 10 + i;
    r.log_ms = 5'000 + i;
    r.event.kind = static_cast<server::AuditKind>(static_cast<std::uint8_t>(in[0]) % (server::kAuditKindMax + 1));
    const std::size_t declared =
        static_cast<std::uint8_t>(in[1]) | static_cast<std::size_t>(static_cast<std::uint8_t>(in[2])) << 8;
    const std::size_t length = std::min(declared, in.size() - 3);
    r.event.lock = std::string(in.substr(3, length));
    in.remove_prefix(3 + length);
    r.event.session = 7 + i;
    r.event.owner = "owner";
    r.event.token = 100 + i;
    r.event.cause = server::AuditCause::kAcquired;
    r.event.reason = "acquired";  // audit_cause_text(cause): decoding derives the cause from it
    r.event.wait_ms = i % 2 == 0 ? -1 : static_cast<std::int64_t>(i);
    r.event.hold_ms = -1;
    r.event.delay_ms = static_cast<std::int64_t>(i);
    const std::string payload = server::encode_history_record(r);
    put_u32(file, static_cast<std::uint32_t>(payload.size()));
    put_u32(file, log::crc32_update(0, payload));
    file += payload;
    written.push_back(std::move(r));
  }
  while (in.size() >= 5) {
    const std::size_t at = log::get_u32_le(in) % file.size();
    file[at] = static_cast<char>(file[at] ^ in[4]);
    in.remove_prefix(5);
  }
  auto parsed = server::parse_history_segment("history.log", file);
  if (!parsed) {
    FUZZ_CHECK(parsed.status().code() == ErrorCode::kCorruption);
    return 0;
  }
  check_shape(*parsed, file.size());
  FUZZ_CHECK(parsed->records.size() <= written.size());
  for (std::size_t i = 0; i < parsed->records.size(); ++i) FUZZ_CHECK(parsed->records[i] == written[i]);
  return 0;
}
