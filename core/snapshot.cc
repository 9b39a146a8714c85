// core/snapshot.cc: the versioned, checksummed snapshot image (layout in
// docs/core.md). Encoding is canonical (everything sorted: sessions by id,
// taken from the ordered id list the state keeps; locks and keys by name,
// sorted here), so equal states give equal bytes. Decoding checks every
// byte, length and cross-reference and answers kCorruption instead of
// trusting the input.
#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/assert.h"
#include "core/byte_io.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

constexpr std::string_view kMagic = "LHSM";
// Versions: 1 the original layout; 2 adds paused_until (the Reopen
// quarantine) after last_now; 3 also adds each session's user after its
// owner. An image whose sessions all have no user is written as version 2
// (so images without users keep one encoding); all three are read.
constexpr std::uint8_t kVersionNoUsers = 2;
constexpr std::uint8_t kVersionUsers = 3;
constexpr std::size_t kMaxString = 64U << 20;  // hard cap per string, beside "fits the input"

std::uint32_t crc_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t pos = 0;
  while (pos < bytes.size()) {  // zlib takes uInt lengths
    const std::size_t n = std::min<std::size_t>(bytes.size() - pos, 1U << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + pos), static_cast<uInt>(n));
    pos += n;
  }
  return static_cast<std::uint32_t>(crc);
}

template <typename Map>
std::vector<typename Map::const_pointer> sorted_by_key(const Map& m) {
  std::vector<typename Map::const_pointer> v;
  v.reserve(m.size());
  for (const auto& kv : m) v.push_back(&kv);
  std::sort(v.begin(), v.end(), [](auto a, auto b) { return a->first < b->first; });
  return v;
}

void put_reply(ByteWriter& w, const Reply& r) {
  w.u8(static_cast<std::uint8_t>(r.code));
  w.u8(static_cast<std::uint8_t>(r.error.code()));
  w.bytes(r.error.message());
  w.varint(r.token);
  w.varint(r.session);
  w.varint(r.count);
  w.boolean(r.value.has_value());
  if (r.value) w.bytes(*r.value);
}

Reply get_reply(ByteReader& in) {
  Reply r;
  const std::uint8_t code = in.u8();
  const std::uint8_t err = in.u8();
  std::string message = in.bytes(kMaxString);
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
  if (in.boolean()) r.value = in.bytes(kMaxString);
  return r;
}

}  // namespace

std::string encode_snapshot(const CoreState& s) {
  ByteWriter w;
  const bool users = std::any_of(s.sessions.begin(), s.sessions.end(),
                                 [](const auto& kv) { return !kv.second.user.empty(); });
  w.raw(kMagic);
  w.u8(users ? kVersionUsers : kVersionNoUsers);
  w.varint(s.revision);
  w.varint(s.last_now);
  w.varint(s.paused_until);

  // Sessions in id order: session_order already holds the ids ascending
  // (with stale ids of ended sessions), so no sort.
  w.buffer().reserve(s.sessions.size() * 24 + s.locks.size() * 48 + 64);
  w.varint(s.sessions.size());
  std::size_t sessions_written = 0;
  for (const SessionId id : s.session_order.ids) {
    const auto found = s.sessions.find(id);
    if (found == s.sessions.end()) continue;
    ++sessions_written;
    const Session& sess = found->second;
    w.varint(id);
    w.varint(sess.ttl_ms);
    w.varint(sess.opened_at);
    w.boolean(sess.compat);
    w.bytes(sess.owner);
    if (users) w.bytes(sess.user);
    w.boolean(sess.idem != nullptr);
    if (sess.idem) {
      std::vector<const IdemEntry*> entries;
      for (const IdemEntry& e : sess.idem->entries) entries.push_back(&e);
      std::sort(entries.begin(), entries.end(), [](auto a, auto b) { return a->seq < b->seq; });
      w.varint(sess.idem->high);
      w.varint(entries.size());
      for (const IdemEntry* e : entries) {
        w.varint(e->seq);
        put_reply(w, e->reply);
      }
    }
  }

  LEASEHOLD_ASSERT(sessions_written == s.sessions.size(), "session order lists {} of {} sessions", sessions_written,
                   s.sessions.size());

  w.varint(s.locks.size());
  for (const auto* kv : sorted_by_key(s.locks)) {
    const Lock& l = kv->second;
    w.bytes(kv->first);
    w.u8(static_cast<std::uint8_t>((l.semaphore ? 1U : 0U) | (l.compat ? 2U : 0U)));
    w.varint(l.limit);
    w.varint(l.last_token);
    w.varint(l.delay_until);
    w.varint(l.holders.size());
    for (const Holder& h : l.holders) {
      w.varint(h.session);
      w.varint(h.token);
      w.varint(h.acquired_at);
      w.varint(h.delay_ms);
      w.varint(h.seq);
      w.u8(static_cast<std::uint8_t>(h.mode));
    }
    w.varint(l.waiters.size());
    for (const Waiter& x : l.waiters) {
      w.varint(x.session);
      w.varint(x.seq);
      w.varint(x.queued_at);
      w.varint(x.deadline);
      w.varint(x.delay_ms);
      w.u8(static_cast<std::uint8_t>(x.mode));
    }
  }

  w.varint(s.fence.size());
  for (const auto* kv : sorted_by_key(s.fence)) {
    w.bytes(kv->first);
    w.bytes(kv->second.value);
    w.varint(kv->second.token);
  }

  w.varint(s.compat.size());
  for (const auto* kv : sorted_by_key(s.compat)) {
    w.bytes(kv->first);
    w.bytes(kv->second.value);
    w.varint(kv->second.token);
    w.varint(kv->second.session);
  }

  std::string out = w.take();
  const std::uint32_t crc = crc_of(out);
  ByteWriter tail;
  tail.u32_fixed(crc);
  out += tail.buffer();
  return out;
}

Status decode_snapshot_body(ByteReader& in, CoreState& out, std::uint8_t version);  // snapshot_decode.cc

Status decode_snapshot(std::string_view bytes, CoreState& out) {
  const auto corrupt = [](std::string what) {
    return Status(ErrorCode::kCorruption, "snapshot: " + std::move(what));
  };
  if (bytes.size() < kMagic.size() + 1 + 4) return corrupt("too short");
  if (bytes.substr(0, kMagic.size()) != kMagic) return corrupt("bad magic");
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  ByteReader crc_in(bytes.substr(bytes.size() - 4));
  if (crc_in.u32_fixed() != crc_of(body)) return corrupt("checksum mismatch");
  const auto version = static_cast<std::uint8_t>(bytes[kMagic.size()]);
  if (version < 1 || version > kVersionUsers) {
    return corrupt("unsupported version " + std::to_string(version));
  }
  ByteReader in(body.substr(kMagic.size() + 1));
  return decode_snapshot_body(in, out, version);
}

namespace snapshot_io {
Reply read_reply(ByteReader& in) { return get_reply(in); }
std::size_t max_string() { return kMaxString; }
}  // namespace snapshot_io

}  // namespace leasehold::core::detail
