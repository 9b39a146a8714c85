// fuzz/snapshot_fuzzer.cc: libFuzzer target for the snapshot decoder
// (core/snapshot.cc, core/snapshot_decode.cc) through StateMachine::restore.
//
// Input: byte 0 bit 0 set: the rest is handed to restore() as it is (magic,
// version and checksum checks); clear: the rest is a snapshot body and the
// target adds the "LHSM" magic, version 1 and the crc32, so that mutations
// reach the body decoder instead of failing the checksum.
// When restore() accepts the bytes, the restored state must snapshot and
// restore again to the same bytes, and must keep working: every live session
// is expired, time moves on, and a fresh session acquires every lock; each
// grant's token must be above the lock's last token from the snapshot (the
// fencing promise across a restore).
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"

namespace {

using namespace leasehold;  // NOLINT: one small target

std::string framed(std::string_view body) {
  std::string out = "LHSM";
  out += '\x01';
  out += body;
  std::uint32_t crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  for (int i = 0; i < 4; ++i) {
    out += static_cast<char>(crc & 0xffU);
    crc >>= 8;
  }
  return out;
}

core::Command at(core::LogMillis now, core::CommandBody body) {
  core::Command c;
  c.now = now;
  c.body = std::move(body);
  return c;
}

void exercise(core::StateMachine& sm) {
  constexpr std::size_t kMax = 64;
  (void)sm.pending_timers();
  const auto locks = sm.locks("", kMax);
  const auto sessions = sm.sessions();
  core::LogMillis now = sm.last_now();
  std::size_t n = 0;
  for (const core::SessionInfo& s : sessions) {
    if (++n > kMax) break;
    fuzz::apply_checked(sm, at(now, core::ExpireSession{s.id}));
  }
  now += 4ULL * 3600 * 1000;  // past every lock-delay
  fuzz::apply_checked(sm, at(now, core::Tick{}));
  const core::ApplyResult opened = sm.apply(at(now, core::OpenSession{60'000, "fuzz"}));
  if (opened.reply.is_error()) return;  // e.g. max_sessions reached
  for (const core::LockInfo& l : locks) {
    core::Acquire a;
    a.lock = l.name;
    a.session = opened.reply.session;
    a.mode = l.limit > 1 ? core::LockMode::kSemaphore : core::LockMode::kExclusive;
    a.limit = l.limit;
    const core::ApplyResult r = sm.apply(at(now, a));
    if (r.reply.code == core::ReplyCode::kOk) FUZZ_CHECK(r.reply.token > l.last_token);
  }
  fuzz::check_snapshot_round_trip(sm);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string bytes = (data[0] & 1U) != 0 ? std::string(rest) : framed(rest);
  auto restored = core::StateMachine::restore(bytes);
  if (!restored) {
    FUZZ_CHECK(restored.status().code() == ErrorCode::kCorruption);
    return 0;
  }
  fuzz::check_snapshot_round_trip(*restored);
  exercise(*restored);
  return 0;
}
