// fuzz/entry_journal_fuzzer.cc: libFuzzer target for the embedded log's
// entry journal format (log/entry_journal.h, parse_entry_journal).
//
// Input: byte 0 bit 0 set: the rest, zero-padded to whole 4 KiB blocks (at
// least 3), is a journal file as found on disk. Clear: the rest is
// [u8 records][u16 LE payload length, payload]... then [u32 LE offset, u8
// xor]... : the target writes a valid journal (a fixed nonce, start index
// 100) holding those payloads, then flips the given bytes, so mutations
// reach the records behind the checksums instead of failing the header.
// Properties: parsing never crashes and fails only with kCorruption; what it
// returns holds contiguous indices from its start index and ends on a block
// boundary inside the file; and from a journal this target wrote, every
// entry it returns is the very payload written under that index (damage is
// refused or ends the journal, never read back as other bytes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "log/entry_journal.h"
#include "log/log_format.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

constexpr std::size_t kBlock = log::EntryJournal::kBlockBytes;
constexpr std::uint64_t kNonce = 0x5eed5eed12345678ULL;
constexpr log::LogIndex kStart = 100;

void check_shape(const log::ParsedJournal& j, std::size_t file_size) {
  for (std::size_t i = 0; i < j.entries.size(); ++i) FUZZ_CHECK(j.entries[i].first == j.start_index + i);
  FUZZ_CHECK(j.next_offset % kBlock == 0);
  FUZZ_CHECK(j.next_offset >= 2 * kBlock && j.next_offset <= file_size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1U) != 0) {
    if (in.size() > 64 * kBlock) return 0;
    std::string file(in);
    file.resize(std::max<std::size_t>(3, (file.size() + kBlock - 1) / kBlock) * kBlock, '\0');
    auto parsed = log::parse_entry_journal(file, "journal");
    if (!parsed) {
      FUZZ_CHECK(parsed.status().code() == ErrorCode::kCorruption);
      return 0;
    }
    check_shape(*parsed, file.size());
    return 0;
  }

  if (in.empty()) return 0;
  const std::size_t records = static_cast<std::uint8_t>(in[0]) % 16;
  in.remove_prefix(1);
  std::vector<std::string> written;
  std::string file = std::string(kBlock, '\0') + log::encode_journal_header(1, kNonce, kStart);
  for (std::size_t r = 0; r < records && in.size() >= 2; ++r) {
    const std::size_t declared =
        static_cast<std::uint8_t>(in[0]) | static_cast<std::size_t>(static_cast<std::uint8_t>(in[1])) << 8;
    const std::size_t length = std::min(declared, in.size() - 2);
    written.emplace_back(in.substr(2, length));
    in.remove_prefix(2 + length);
    file += log::encode_journal_record(kNonce, kStart + r, written.back());
  }
  file.resize(file.size() + 2 * kBlock, '\0');  // free space after the records
  while (in.size() >= 5) {
    const std::size_t at = log::get_u32_le(in) % file.size();
    file[at] = static_cast<char>(file[at] ^ in[4]);
    in.remove_prefix(5);
  }
  auto parsed = log::parse_entry_journal(file, "journal");
  if (!parsed) {
    FUZZ_CHECK(parsed.status().code() == ErrorCode::kCorruption);
    return 0;
  }
  check_shape(*parsed, file.size());
  if (parsed->generation == 1 && parsed->nonce == kNonce && parsed->start_index == kStart) {
    FUZZ_CHECK(parsed->entries.size() <= written.size());
    for (std::size_t i = 0; i < parsed->entries.size(); ++i) FUZZ_CHECK(parsed->entries[i].second == written[i]);
  }
  return 0;
}
