// core/snapshot_format.h: the constants of the snapshot image shared by its
// encoder (snapshot_encoder.cc) and decoder (snapshot.cc,
// snapshot_decode.cc). Layout in docs/core.md.
//
// Thread-safety: constants and a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace leasehold::core::detail {

inline constexpr std::string_view kSnapshotMagic = "LHSM";
// Versions: 1 the original layout; 2 adds paused_until (the Reopen
// quarantine) after last_now; 3 also adds each session's user after its
// owner. An image whose sessions all have no user is written as version 2
// (so images without users keep one encoding); 4 also adds each session's
// ONCLOSE grace (+1, 0 = none) and reqid after its user, and is written only
// when some session has either. All four are read.
inline constexpr std::uint8_t kSnapshotVersionNoUsers = 2;
inline constexpr std::uint8_t kSnapshotVersionUsers = 3;
inline constexpr std::uint8_t kSnapshotVersionOpenOptions = 4;
// A holder's or waiter's mode byte with this bit set is followed by its
// lease (a holder's lease end, a waiter's lease length; never 0). Images
// without leases are unchanged, so no version bump.
inline constexpr std::uint8_t kLeaseFlag = 0x80;
// After the compat keys, an optional section: this byte, then the shard id
// and its owned slots as ranges (count, then first and last of each, ascending
// and apart). Only a sharded state writes it, so other images are unchanged.
inline constexpr std::uint8_t kShardSection = 1;
// Hard cap per string, beside "fits the input".
inline constexpr std::size_t kSnapshotMaxString = 64U << 20;

// The image's checksum (CRC-32) over `bytes`, continuing from `crc` (0 to
// start): crc(a + b) == snapshot_crc(b, snapshot_crc(a, 0)).
std::uint32_t snapshot_crc(std::string_view bytes, std::uint32_t crc = 0);

}  // namespace leasehold::core::detail
