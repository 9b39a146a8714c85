// core/snapshot_encoder.cc: writes the snapshot image (layout in
// docs/core.md), whole (encode_snapshot) or in steps (SnapshotEncoder).
// Encoding is canonical (everything sorted: sessions by id, taken from the
// ordered id list the state keeps; locks and keys by name, sorted here), so
// equal states give equal bytes.
#include "core/snapshot_encoder.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/assert.h"
#include "core/snapshot_format.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace {

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

// Everything after the sessions section.
std::string encode_tail(const CoreState& s) {
  ByteWriter w;
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
      // The mode's high bit: a lease end follows (images without leases keep their bytes).
      w.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(h.mode) | (h.lease_until != 0 ? kLeaseFlag : 0U)));
      if (h.lease_until != 0) w.varint(h.lease_until);
    }
    w.varint(l.waiters.size());
    for (const Waiter& x : l.waiters) {
      w.varint(x.session);
      w.varint(x.seq);
      w.varint(x.queued_at);
      w.varint(x.deadline);
      w.varint(x.delay_ms);
      w.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(x.mode) | (x.lease_ms != 0 ? kLeaseFlag : 0U)));
      if (x.lease_ms != 0) w.varint(x.lease_ms);
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

  // A shard's record (SetOwnedSlots), only when there is one: an unsharded
  // state's image keeps its bytes.
  if (s.shard != 0) {
    w.u8(kShardSection);
    w.varint(s.shard);
    const std::vector<slots::SlotRange> ranges = s.owned_slots.ranges();
    w.varint(ranges.size());
    for (const slots::SlotRange& r : ranges) {
      w.varint(r.first);
      w.varint(r.last);
    }
  }
  return w.take();
}

// A piece is closed once it holds this much, so no single buffer grows (and
// is copied on growth) without bound while the loop waits.
constexpr std::size_t kPieceBytes = 1U << 20;
// Each piece's buffer is allocated once, at this size (a piece closes once
// it holds kPieceBytes; one session's encoding is far below the slack), so
// it is never regrown: regrowing copied it into fresh memory, whose page
// faults held the loop for milliseconds at 10M sessions.
constexpr std::size_t kPieceCapacity = kPieceBytes + (64U << 10);
// How far ahead of the cursor step() prefetches a session's bucket pointer,
// and then its chain (tuned on the longest step at 10M sessions).
constexpr std::ptrdiff_t kSlotAhead = 16;
constexpr std::ptrdiff_t kChainAhead = 8;

}  // namespace

std::uint32_t snapshot_crc(std::string_view bytes, std::uint32_t crc) {
  uLong c = crc;
  std::size_t pos = 0;
  while (pos < bytes.size()) {  // zlib takes uInt lengths
    const std::size_t n = std::min<std::size_t>(bytes.size() - pos, 1U << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + pos), static_cast<uInt>(n));
    pos += n;
  }
  return static_cast<std::uint32_t>(c);
}

void put_session(ByteWriter& w, SessionId id, const Session& sess, std::uint8_t version) {
  w.varint(id);
  w.varint(sess.ttl_ms);
  w.varint(sess.opened_at);
  w.boolean(sess.compat);
  w.bytes(sess.owner());
  if (version >= kSnapshotVersionUsers) w.bytes(sess.user());
  if (version >= kSnapshotVersionOpenOptions) {
    const std::optional<std::uint32_t> grace = sess.close_grace_ms();
    w.varint(grace ? std::uint64_t{*grace} + 1 : 0);
    w.bytes(sess.reqid());
  }
  const IdemWindow* idem = sess.idem();
  w.boolean(idem != nullptr);
  if (idem) {
    std::vector<const IdemEntry*> entries;
    entries.reserve(idem->entries.size());
    for (const IdemEntry& e : idem->entries) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(), [](auto a, auto b) { return a->seq < b->seq; });
    w.varint(idem->high);
    w.varint(entries.size());
    for (const IdemEntry* e : entries) {
      w.varint(e->seq);
      put_reply(w, e->reply);
    }
  }
}

SnapshotEncoder::SnapshotEncoder(const CoreState& s)
    : through_(highest_session_id(s)),
      expected_(s.sessions.size()),
      version_(s.sessions_with_open_options != 0 ? kSnapshotVersionOpenOptions
               : s.sessions_with_user != 0       ? kSnapshotVersionUsers
                                                 : kSnapshotVersionNoUsers) {
  // A small image grows its one buffer as usual; a large one fills pieces.
  if (expected_ * 8 >= kPieceBytes) current_.buffer().reserve(kPieceCapacity);
  current_.raw(kSnapshotMagic);
  current_.u8(version_);
  current_.varint(s.revision);
  current_.varint(s.last_now);
  current_.varint(s.paused_until);
  current_.varint(s.sessions.size());
  tail_ = encode_tail(s);
}

void SnapshotEncoder::before_change(const CoreState& s, SessionId id) {
  if (done_ || id < next_ || id > through_ || copies_.contains(id)) return;
  const auto found = s.sessions.find(id);
  if (found == s.sessions.end()) return;
  ByteWriter w;
  put_session(w, id, found->second, version_);
  copies_.emplace(id, w.take());
}

bool SnapshotEncoder::step(const CoreState& s, std::size_t max_sessions) {
  if (done_) return true;
  const auto& ids = s.session_order.ids;
  auto live = std::lower_bound(ids.begin(), ids.end(), next_);
  auto copy = copies_.lower_bound(next_);
  // No id is reserved as "none": a state at the last revision can hold a
  // session whose id is the largest SessionId (found by fuzz_snapshot).
  for (std::size_t n = 0; n < max_sessions && !done_; ++n) {
    const bool has_live = live != ids.end() && *live <= through_;
    if (has_live) {
      // The lookups below miss the cache at millions of sessions: start the
      // ones a few ids ahead now (IncrementalMap::prefetch_slot).
      const auto left = ids.end() - live;
      if (left > kSlotAhead) s.sessions.prefetch_slot(*(live + kSlotAhead));
      if (left > kChainAhead) s.sessions.prefetch_chain(*(live + kChainAhead));
    }
    const bool has_copy = copy != copies_.end();
    if (!has_live && !has_copy) {
      done_ = true;
      break;
    }
    const SessionId id = !has_copy ? *live : !has_live ? copy->first : std::min(*live, copy->first);
    if (has_copy && copy->first == id) {
      current_.raw(copy->second);
      ++written_;
      copy = copies_.erase(copy);
    } else if (const auto found = s.sessions.find(id); found != s.sessions.end()) {
      put_session(current_, id, found->second, version_);
      ++written_;
    }  // else a stale id: the session ended before begin
    if (has_live && *live == id) ++live;
    if (id == std::numeric_limits<SessionId>::max()) {
      done_ = true;  // nothing can follow; next_ would wrap to 0
    } else {
      next_ = id + 1;
    }
    if (current_.buffer().size() >= kPieceBytes) {
      pieces_.push_back(current_.take());
      current_.buffer().clear();
      current_.buffer().reserve(kPieceCapacity);
    }
  }
  if (done_) {
    LEASEHOLD_ASSERT(written_ == expected_, "snapshot wrote {} of the {} sessions live at its start", written_,
                     expected_);
    LEASEHOLD_ASSERT(copies_.empty(), "snapshot left {} copied sessions unwritten", copies_.size());
  }
  return done_;
}

std::vector<std::string> SnapshotEncoder::finish() {
  LEASEHOLD_ASSERT(done_, "snapshot finished before its last session was written");
  pieces_.push_back(current_.take());
  pieces_.push_back(std::move(tail_));
  return std::move(pieces_);
}

std::string SnapshotEncoder::join(std::vector<std::string> pieces) {
  std::size_t total = 4;
  for (const std::string& p : pieces) total += p.size();
  std::string out;
  out.reserve(total);
  std::uint32_t crc = 0;
  for (const std::string& p : pieces) {
    crc = snapshot_crc(p, crc);
    out += p;
  }
  out += trailer(crc);
  return out;
}

std::string SnapshotEncoder::trailer(std::uint32_t crc) {
  ByteWriter tail;
  tail.u32_fixed(crc);
  return tail.take();
}

std::string encode_snapshot(const CoreState& s) {
  SnapshotEncoder encoder(s);
  encoder.step(s, std::numeric_limits<std::size_t>::max());
  return SnapshotEncoder::join(encoder.finish());
}

}  // namespace leasehold::core::detail
