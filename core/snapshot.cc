// core/snapshot.cc: reads the versioned, checksummed snapshot image (layout
// in docs/core.md; written by snapshot_encoder.cc). Decoding checks every
// byte, length and cross-reference and answers kCorruption instead of
// trusting the input.
#include <string>

#include "core/byte_io.h"
#include "core/snapshot_format.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

Reply get_reply(ByteReader& in) {
  Reply r;
  const std::uint8_t code = in.u8();
  const std::uint8_t err = in.u8();
  std::string message = in.bytes(kSnapshotMaxString);
  if (code > static_cast<std::uint8_t>(ReplyCode::kError) ||
      err > static_cast<std::uint8_t>(ErrorCode::kInternal) ||
      (code == static_cast<std::uint8_t>(ReplyCode::kError)) != (err != 0)) {
    in.fail();
    return r;
  }
  r.code = static_cast<ReplyCode>(code);
  if (err != 0) r.error = Status(static_cast<ErrorCode>(err), std::move(message));
  r.token = in.varint();
  r.session = in.varint();
  r.count = in.varint();
  if (in.boolean()) r.value = in.bytes(kSnapshotMaxString);
  return r;
}

}  // namespace

Status decode_snapshot_body(ByteReader& in, CoreState& out, std::uint8_t version);  // snapshot_decode.cc

Status decode_snapshot(std::string_view bytes, CoreState& out) {
  const auto corrupt = [](std::string what) {
    return Status(ErrorCode::kCorruption, "snapshot: " + std::move(what));
  };
  if (bytes.size() < kSnapshotMagic.size() + 1 + 4) return corrupt("too short");
  if (bytes.substr(0, kSnapshotMagic.size()) != kSnapshotMagic) return corrupt("bad magic");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  ByteReader crc_in(bytes.substr(bytes.size() - 4));
  if (crc_in.u32_fixed() != snapshot_crc(body)) return corrupt("checksum mismatch");
  const auto version = static_cast<std::uint8_t>(bytes[kSnapshotMagic.size()]);
  if (version < 1 || version > kSnapshotVersionOpenOptions) {
    return corrupt("unsupported version " + std::to_string(version));
  }
  ByteReader in(body.substr(kSnapshotMagic.size() + 1));
  return decode_snapshot_body(in, out, version);
}

namespace snapshot_io {
Reply read_reply(ByteReader& in) { return get_reply(in); }
std::size_t max_string() { return kSnapshotMaxString; }
}  // namespace snapshot_io

}  // namespace leasehold::core::detail
