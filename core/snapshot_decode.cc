// core/snapshot_decode.cc: parses and cross-checks a snapshot body (after the
// magic, version and checksum were verified by snapshot.cc). Every length is
// bounded by the bytes that remain; every reference is checked, so restore()
// never builds a state that breaks the state machine's invariants.
#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/snapshot_format.h"
#include "core/state.h"

namespace leasehold::core::detail {
namespace snapshot_io {
Reply read_reply(ByteReader& in);
std::size_t max_string();
}  // namespace snapshot_io

namespace {

Status corrupt(const std::string& what) { return Status(ErrorCode::kCorruption, "snapshot: " + what); }

// A mode byte that may carry kLeaseFlag, then the lease (never 0) when it does.
bool read_mode_lease(ByteReader& in, LockMode& mode, std::uint64_t& lease) {
  const std::uint8_t m = in.u8();
  if (!in.ok()) return false;
  const bool has_lease = (m & kLeaseFlag) != 0;
  const auto base = static_cast<std::uint8_t>(m & ~kLeaseFlag);
  if (base > static_cast<std::uint8_t>(LockMode::kSemaphore)) return false;
  mode = static_cast<LockMode>(base);
  if (has_lease) {
    lease = in.varint();
    if (lease == 0) return false;
  }
  return in.ok();
}

Status read_sessions(ByteReader& in, CoreState& s, std::uint8_t version) {
  const bool with_users = version >= kSnapshotVersionUsers;
  const std::size_t n = in.count(6);
  s.sessions.reserve(n);  // one allocation of the buckets, no rehash while filling
  SessionId prev = 0;
  for (std::size_t i = 0; i < n && in.ok(); ++i) {
    const SessionId id = in.varint();
    if (!in.ok()) break;
    // The revision part of an id (below a shard's bits) is the revision that
    // opened it; the shard part is checked once the shard is read (read_shard).
    if (id <= prev || (id & kSessionSerialMask) > s.revision) {
      return corrupt("session id " + std::to_string(id) + " out of order");
    }
    prev = id;
    Session& sess = s.sessions[id];
    note_session_opened(s, id);  // ascending, checked above
    const std::uint64_t ttl_ms = in.varint();
    if (ttl_ms > kMaxSessionTtlMs) return corrupt("session ttl " + std::to_string(ttl_ms) + " ms over the largest");
    sess.ttl_ms = session_ttl(ttl_ms);
    sess.opened_at = in.varint();
    sess.compat = in.boolean();
    const std::string owner = in.bytes(snapshot_io::max_string());
    const std::string user = with_users ? in.bytes(snapshot_io::max_string()) : std::string();
    sess.set_labels(owner, user);
    if (!user.empty()) ++s.sessions_with_user;
    if (version >= kSnapshotVersionOpenOptions) {
      const std::uint64_t grace = in.varint_max(kMaxSessionTtlMs + 1);
      const std::string reqid = in.bytes(snapshot_io::max_string());
      if (!in.ok()) break;
      // (A grace may exceed the TTL: a later SetSessionTtl may lower it.)
      sess.set_open_options(grace == 0 ? std::nullopt : std::optional<std::uint32_t>(grace - 1), reqid);
      if (!note_open_options(s, id, sess)) return corrupt("reqid of session " + std::to_string(id) + " taken twice");
    }
    if (sess.ttl_ms == 0 && !sess.compat) return corrupt("session with ttl 0");
    if (in.boolean()) {
      IdemWindow& idem = sess.idem_window();
      idem.high = in.varint();
      // An entry takes at least 8 bytes: seq, then the reply's code, error
      // code, message length, token, session, count and has-value bytes.
      const std::size_t m = in.count(8);
      std::uint64_t prev_seq = 0;
      for (std::size_t k = 0; k < m && in.ok(); ++k) {
        const std::uint64_t seq = in.varint();
        if (in.ok() && (seq <= prev_seq || seq > idem.high)) return corrupt("idempotence seq order");
        prev_seq = seq;
        idem.entries.push_back(IdemEntry{seq, snapshot_io::read_reply(in)});
      }
    }
  }
  return in.ok() ? Status() : corrupt("malformed sessions");
}

// Holders and waiters of one lock: sessions exist, none twice, links built.
Status read_members(ByteReader& in, CoreState& s, LockEntry& e) {
  Lock& l = e.second;
  std::vector<SessionId> members;
  const std::size_t nh = in.count(6);
  for (std::size_t i = 0; i < nh && in.ok(); ++i) {
    Holder h;
    h.session = in.varint();
    h.token = in.varint();
    h.acquired_at = in.varint();
    h.delay_ms = in.varint();
    h.seq = in.varint();
    if (!read_mode_lease(in, h.mode, h.lease_until)) return corrupt("bad holder mode");
    if (h.token > l.last_token || h.token > s.revision) return corrupt("holder token above revision");
    l.holders.push_back(h);
    members.push_back(h.session);
  }
  const std::size_t nw = in.count(6);
  for (std::size_t i = 0; i < nw && in.ok(); ++i) {
    Waiter w;
    w.session = in.varint();
    w.seq = in.varint();
    w.queued_at = in.varint();
    w.deadline = in.varint();
    w.delay_ms = in.varint();
    if (!read_mode_lease(in, w.mode, w.lease_ms)) return corrupt("bad waiter mode");
    if (w.lease_ms > kMaxSessionTtlMs) return corrupt("waiter lease over the largest");
    l.waiters.push_back(w);
    ++s.waiters;
    members.push_back(w.session);
  }
  if (!in.ok()) return corrupt("malformed lock members");
  for (SessionId id : members) {
    const auto it = s.sessions.find(id);
    if (it == s.sessions.end()) return corrupt("lock '" + e.first + "' names unknown session");
    if (it->second.compat != l.compat) return corrupt("compat session mismatch on '" + e.first + "'");
    it->second.lock_list().push_back(&e);
  }
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) {
    return corrupt("session twice in lock '" + e.first + "'");
  }
  return Status();
}

Status check_lock_shape(const std::string& name, const Lock& l) {
  if (l.limit == 0 || (!l.semaphore && l.limit != 1)) return corrupt("bad limit on '" + name + "'");
  if (l.holders.empty() && l.waiters.empty() && l.delay_until == 0) return corrupt("idle lock '" + name + "'");
  const auto bad_mode = [&l](LockMode m) { return (m == LockMode::kSemaphore) != l.semaphore; };
  for (const Holder& h : l.holders) {
    if (bad_mode(h.mode)) return corrupt("holder mode on '" + name + "'");
    if (h.mode == LockMode::kExclusive && l.holders.size() != 1) return corrupt("exclusive shared on '" + name + "'");
  }
  for (const Waiter& w : l.waiters) {
    if (bad_mode(w.mode)) return corrupt("waiter mode on '" + name + "'");
  }
  if (l.semaphore && l.holders.size() > l.limit) return corrupt("semaphore over limit on '" + name + "'");
  // A compat key's lock is what apply_compat_set() builds: one exclusive
  // holder without lock-delay (a delay would outlive the key and wedge it).
  if (l.compat && (l.semaphore || l.holders.size() != 1 || !l.waiters.empty() || l.delay_until != 0 ||
                   l.holders.front().delay_ms != 0 || l.holders.front().mode != LockMode::kExclusive ||
                   l.holders.front().lease_until != 0)) {
    return corrupt("compat lock shape on '" + name + "'");
  }
  return Status();
}

Status read_locks(ByteReader& in, CoreState& s) {
  const std::size_t n = in.count(8);
  std::string prev;
  for (std::size_t i = 0; i < n && in.ok(); ++i) {
    std::string name = in.bytes(snapshot_io::max_string());
    if (!in.ok()) break;
    if (name.empty() || (i > 0 && name <= prev)) return corrupt("lock names out of order");
    const std::uint8_t flags = in.u8();
    if (flags > 3) return corrupt("bad lock flags");
    const auto it = s.locks.try_emplace(name).first;
    Lock& l = it->second;
    l.semaphore = (flags & 1U) != 0;
    l.compat = (flags & 2U) != 0;
    l.limit = static_cast<std::uint32_t>(in.varint_max(std::numeric_limits<std::uint32_t>::max()));
    l.last_token = in.varint();
    l.delay_until = in.varint();
    // Tokens are revisions: a last token above the revision would let the
    // next grant hand out a lower token than one already issued.
    if (in.ok() && l.last_token > s.revision) return corrupt("last token above revision on '" + name + "'");
    if (Status st = read_members(in, s, *it); !st.is_ok()) return st;
    if (Status st = check_lock_shape(name, l); !st.is_ok()) return st;
    if (l.delay_until != 0) s.delayed.emplace(l.delay_until, name);
    prev = std::move(name);
  }
  return in.ok() ? Status() : corrupt("malformed locks");
}

Status read_values(ByteReader& in, CoreState& s) {
  std::size_t n = in.count(3);
  std::string prev;
  for (std::size_t i = 0; i < n && in.ok(); ++i) {
    std::string key = in.bytes(snapshot_io::max_string());
    if (in.ok() && (key.empty() || (i > 0 && key <= prev))) return corrupt("fence keys out of order");
    FencedValue& v = s.fence[key];
    v.value = in.bytes(snapshot_io::max_string());
    v.token = in.varint();
    if (in.ok() && v.token > s.revision) return corrupt("fence key '" + key + "' token above revision");
    prev = std::move(key);
  }
  n = in.count(4);
  for (std::size_t i = 0; i < n && in.ok(); ++i) {
    std::string key = in.bytes(snapshot_io::max_string());
    if (in.ok() && (key.empty() || (i > 0 && key <= prev))) return corrupt("compat keys out of order");
    CompatValue& v = s.compat[key];
    v.value = in.bytes(snapshot_io::max_string());
    v.token = in.varint();
    v.session = in.varint();
    const auto lit = s.locks.find(key);
    if (in.ok() && (lit == s.locks.end() || !lit->second.compat ||
                    lit->second.holders.front().session != v.session ||
                    lit->second.holders.front().token != v.token)) {
      return corrupt("compat key '" + key + "' does not match its lock");
    }
    prev = std::move(key);
  }
  return in.ok() ? Status() : corrupt("malformed values");
}

// The optional shard section (kShardSection), then: every session id names
// no shard or this one (O(log sessions)).
Status read_shard(ByteReader& in, CoreState& s) {
  if (!in.at_end()) {
    if (in.u8() != kShardSection) return corrupt("unknown section after the keys");
    s.shard = static_cast<std::uint32_t>(in.varint_max(kMaxShardId));
    if (in.ok() && s.shard == 0) return corrupt("shard id 0");
    const std::size_t n = in.count(2);
    std::uint64_t next = 0;
    for (std::size_t i = 0; i < n && in.ok(); ++i) {
      const std::uint64_t first = in.varint();
      const std::uint64_t last = in.varint();
      if (!in.ok() || first < next || last < first || last >= slots::kSlotCount || (i > 0 && first == next)) {
        return corrupt("owned slot ranges out of order");
      }
      s.owned_slots.add(slots::SlotRange{static_cast<slots::Slot>(first), static_cast<slots::Slot>(last)});
      next = last + 1;
    }
    if (!in.ok()) return corrupt("malformed shard section");
  }
  // The ids are ascending (read_sessions), so checking the last of each
  // kind checks all (O(log sessions)). Unsharded: every id is at most the
  // revision. A shard: the ids from before it was one are below 2^53 and at
  // most the revision; the others carry its id above a revision part that
  // is at most the revision.
  const std::deque<SessionId>& ids = s.session_order.ids;
  if (ids.empty()) return Status();
  if (s.shard == 0) {
    if (ids.back() > s.revision) return corrupt("session id " + std::to_string(ids.back()) + " above the revision");
    return Status();
  }
  const auto sharded = std::lower_bound(ids.begin(), ids.end(), SessionId{1} << kShardIdShift);
  if (sharded != ids.begin() && *(sharded - 1) > s.revision) {
    return corrupt("session id " + std::to_string(*(sharded - 1)) + " above the revision");
  }
  if (sharded != ids.end()) {
    const SessionId last = ids.back();
    if (shard_of_session(*sharded) != s.shard || shard_of_session(last) != s.shard ||
        (last & kSessionSerialMask) > s.revision) {
      return corrupt("session id " + std::to_string(last) + " is not shard " + std::to_string(s.shard) +
                     "'s at or below the revision");
    }
  }
  return Status();
}

}  // namespace

Status decode_snapshot_body(ByteReader& in, CoreState& s, std::uint8_t version) {
  s.revision = in.varint();
  s.last_now = in.varint();
  if (version >= 2) s.paused_until = in.varint();
  if (!in.ok()) return corrupt("malformed header");
  if (Status st = read_sessions(in, s, version); !st.is_ok()) return st;
  if (Status st = read_locks(in, s); !st.is_ok()) return st;
  if (Status st = read_values(in, s); !st.is_ok()) return st;
  if (Status st = read_shard(in, s); !st.is_ok()) return st;
  if (!in.at_end()) return corrupt("trailing bytes");
  std::size_t compat_locks = 0;
  for (const auto& [name, l] : s.locks) compat_locks += l.compat ? 1 : 0;
  if (compat_locks != s.compat.size()) return corrupt("compat lock without value");
  for (const auto& [id, sess] : s.sessions) {
    if (sess.compat && sess.locks().size() != 1) return corrupt("compat session without its key");
  }
  return Status();
}

}  // namespace leasehold::core::detail
