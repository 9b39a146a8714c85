// fuzz/log_entry_fuzzer.cc: libFuzzer target for the embedded log's entry
// format (log/log_format.h) and the command batch codec inside it
// (core/command_codec.h).
//
// Input: byte 0 bit 0 clear: [index, 8 bytes LE][batch]; the target stores
// the batch with encode_entry_value() and decodes it back (it must come back
// unchanged, and must fail under any other index: the checksum covers the
// key). Bit 0 set: [key, 8 bytes][value], decoded as read from RocksDB.
// A payload that decodes as a batch is re-encoded (stable) and applied to a
// real state machine with the fencing checks of fuzz_support.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "log/log_format.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

void apply_batch(std::string_view payload) {
  auto commands = core::decode_batch(payload);
  if (!commands) {
    FUZZ_CHECK(commands.status().code() == ErrorCode::kInvalidArgument);
    return;
  }
  fuzz::check_codec_round_trip(*commands);
  core::StateMachine sm;
  for (const core::Command& c : *commands) fuzz::apply_checked(sm, c);
  fuzz::check_snapshot_round_trip(sm);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 + log::kEntryKeyBytes) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string_view head = in.substr(0, log::kEntryKeyBytes);
  const std::string_view rest = in.substr(log::kEntryKeyBytes);
  if ((data[0] & 1U) == 0) {
    const log::LogIndex index = log::get_u64_le(head);
    const std::string value = log::encode_entry_value(index, rest);
    auto payload = log::decode_entry_value(index, value);
    FUZZ_CHECK(payload.is_ok() && *payload == rest);
    FUZZ_CHECK(!log::decode_entry_value(index + 1, value).is_ok());
    auto key = log::decode_entry_key(log::encode_entry_key(index));
    FUZZ_CHECK(key.is_ok() && *key == index);
    apply_batch(*payload);
    return 0;
  }
  auto index = log::decode_entry_key(head);
  FUZZ_CHECK(index.is_ok());
  auto payload = log::decode_entry_value(*index, rest);
  if (!payload) {
    FUZZ_CHECK(payload.status().code() == ErrorCode::kCorruption);
    return 0;
  }
  apply_batch(*payload);
  return 0;
}
