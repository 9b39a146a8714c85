// core/state_machine.cc: apply() dispatch, the idempotence window and the
// StateMachine plumbing. Handlers live in sessions.cc, locks.cc, compat.cc,
// fence_kv.cc; queries in queries.cc; the snapshot format in snapshot.cc.
#include "core/state_machine.h"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "common/assert.h"
#include "core/snapshot_format.h"
#include "core/state.h"

namespace leasehold::core {
namespace detail {

bool name_ok(const Limits& limits, std::string_view name) {
  return !name.empty() && name.size() <= limits.max_name_bytes;
}

Reply bad_name(const Limits& limits, std::string_view what, std::string_view name) {
  if (name.empty()) return Reply::fail(ErrorCode::kInvalidArgument, std::string(what) + " must not be empty");
  return Reply::fail(ErrorCode::kLimitExceeded,
                     std::string(what) + " is " + std::to_string(name.size()) +
                         " bytes, over max_name_bytes " + std::to_string(limits.max_name_bytes));
}

LogMillis saturating_add(LogMillis a, std::uint64_t b) {
  const LogMillis sum = a + b;
  return sum < a ? ~LogMillis{0} : sum;
}

void update_cached_reply(CoreState& s, SessionId session, std::uint64_t seq, const Reply& reply) {
  if (seq == 0) return;
  const auto it = s.sessions.find(session);
  if (it == s.sessions.end() || it->second.idem() == nullptr) return;
  for (IdemEntry& e : it->second.idem()->entries) {
    if (e.seq == seq) {
      before_session_change(s, session);
      e.reply = reply;
      return;
    }
  }
}

namespace {

const Reply* find_cached(const IdemWindow* w, std::uint64_t seq) {
  if (w == nullptr) return nullptr;
  for (const IdemEntry& e : w->entries) {
    if (e.seq == seq) return &e.reply;
  }
  return nullptr;
}

bool too_old(const IdemWindow* w, std::uint64_t seq, std::size_t window) {
  return w != nullptr && w->high >= window && seq <= w->high - window;
}

void record(CoreState& s, SessionId session, std::uint64_t seq, const Reply& reply) {
  const std::size_t window = s.limits.idempotence_window;
  if (window == 0) return;
  const auto it = s.sessions.find(session);
  if (it == s.sessions.end()) return;  // the command ended the session itself
  before_session_change(s, session);
  IdemWindow* w = &it->second.idem_window();
  if (seq > w->high) {
    w->high = seq;
    if (w->high >= window) {
      const std::uint64_t floor = w->high - window;
      std::erase_if(w->entries, [floor](const IdemEntry& e) { return e.seq <= floor; });
    }
  }
  w->entries.push_back(IdemEntry{seq, reply});
}

// The session a command acts as, for commands whose body names it.
SessionId body_actor(const CommandBody& body) {
  return std::visit(
      [](const auto& b) -> SessionId {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, Acquire> || std::is_same_v<T, Release> ||
                      std::is_same_v<T, CancelWait> || std::is_same_v<T, CloseSession> ||
                      std::is_same_v<T, SetSessionTtl> || std::is_same_v<T, ExtendLease>) {
          return b.session;
        } else if constexpr (std::is_same_v<T, Transfer>) {
          return b.from;
        } else {
          return 0;
        }
      },
      body);
}

Reply dispatch(Ctx& c) {
  return std::visit(
      [&c](const auto& b) -> Reply {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, OpenSession>) return apply_open_session(c, b);
        else if constexpr (std::is_same_v<T, CloseSession>) return apply_close_session(c, b);
        else if constexpr (std::is_same_v<T, ExpireSession>) return apply_expire_session(c, b);
        else if constexpr (std::is_same_v<T, KillSession>) return apply_kill_session(c, b);
        else if constexpr (std::is_same_v<T, SetSessionTtl>) return apply_set_ttl(c, b);
        else if constexpr (std::is_same_v<T, Acquire>) return apply_acquire(c, b);
        else if constexpr (std::is_same_v<T, Release>) return apply_release(c, b);
        else if constexpr (std::is_same_v<T, CancelWait>) return apply_cancel_wait(c, b);
        else if constexpr (std::is_same_v<T, TimeoutWait>) return apply_timeout_wait(c, b);
        else if constexpr (std::is_same_v<T, Revoke>) return apply_revoke(c, b);
        else if constexpr (std::is_same_v<T, Tick>) return Reply::ok();  // sweep_delays does the work
        else if constexpr (std::is_same_v<T, FencePut>) return apply_fence_put(c, b);
        else if constexpr (std::is_same_v<T, CompatSet>) return apply_compat_set(c, b);
        else if constexpr (std::is_same_v<T, CompatDelete>) return apply_compat_delete(c, b);
        else if constexpr (std::is_same_v<T, Reopen>) return apply_reopen(c, b);
        else if constexpr (std::is_same_v<T, EndLease>) return apply_end_lease(c, b);
        else if constexpr (std::is_same_v<T, ExtendLease>) return apply_extend_lease(c, b);
        else if constexpr (std::is_same_v<T, Transfer>) return apply_transfer(c, b);
        else if constexpr (std::is_same_v<T, ConnectionClosed>) return apply_connection_closed(c, b);
        else return apply_set_owned_slots(c, b);
      },
      c.cmd.body);
}

}  // namespace
}  // namespace detail

StateMachine::StateMachine(Limits limits) : s_(std::make_unique<State>(limits)) {}
StateMachine::~StateMachine() = default;
StateMachine::StateMachine(StateMachine&&) noexcept = default;
StateMachine& StateMachine::operator=(StateMachine&&) noexcept = default;

ApplyResult StateMachine::apply(const Command& cmd) {
  using namespace detail;
  ApplyResult out;
  State& s = *s_;

  // A restored image can carry any revision; the next one must exist.
  if (s.revision == std::numeric_limits<Revision>::max()) {
    out.reply = Reply::fail(ErrorCode::kLimitExceeded, "the revision space is exhausted");
    return out;
  }
  if (cmd.seq != 0) {
    if (cmd.session == 0) {
      out.reply = Reply::fail(ErrorCode::kInvalidArgument,
                              "seq " + std::to_string(cmd.seq) + " requires a session");
      return out;
    }
    const auto it = s.sessions.find(cmd.session);
    if (it == s.sessions.end()) {
      out.reply = Reply::fail(ErrorCode::kSessionExpired,
                              "session " + std::to_string(cmd.session) + " is not live");
      return out;
    }
    const IdemWindow* w = it->second.idem();
    if (const Reply* cached = find_cached(w, cmd.seq)) {
      out.reply = *cached;
      return out;
    }
    if (too_old(w, cmd.seq, s.limits.idempotence_window)) {
      out.reply = Reply::fail(ErrorCode::kInvalidArgument,
                              "sequence too old: seq " + std::to_string(cmd.seq) + " is not above " +
                                  std::to_string(w->high - s.limits.idempotence_window) +
                                  " (idempotence_window " +
                                  std::to_string(s.limits.idempotence_window) + ")");
      return out;
    }
  }
  const SessionId actor = body_actor(cmd.body);
  if (cmd.session != 0 && actor != 0 && actor != cmd.session) {
    out.reply = Reply::fail(ErrorCode::kInvalidArgument,
                            "envelope session " + std::to_string(cmd.session) +
                                " does not match the command's session " + std::to_string(actor));
    return out;
  }

  Ctx c{s, cmd, std::max(cmd.now, s.last_now), s.revision + 1, out.effects};
  out.reply = dispatch(c);
  if (cmd.seq != 0) record(s, cmd.session, cmd.seq, out.reply);
  if (!out.reply.is_error()) {
    // The revision (and so every token) only moves forward (by one, or up to
    // a floor a handler set); never back, never repeated.
    LEASEHOLD_ASSERT(c.rev > s.revision, "revision {} after {}", c.rev, s.revision);
    s.revision = c.rev;
    s.last_now = c.now;
    sweep_delays(c);
  }
  return out;
}

Revision StateMachine::revision() const { return s_->revision; }
LogMillis StateMachine::last_now() const { return s_->last_now; }
LogMillis StateMachine::paused_until() const { return s_->paused_until; }
std::uint32_t StateMachine::shard() const { return s_->shard; }
bool StateMachine::owns_slot(slots::Slot slot) const { return s_->shard == 0 || s_->owned_slots.contains(slot); }
const slots::SlotSet& StateMachine::owned_slots() const { return s_->owned_slots; }
const Limits& StateMachine::limits() const { return s_->limits; }

std::string StateMachine::snapshot() const { return detail::encode_snapshot(*s_); }

void StateMachine::begin_snapshot() {
  LEASEHOLD_ASSERT(!s_->encoder, "a snapshot began while another was in progress");
  s_->encoder = std::make_unique<detail::SnapshotEncoder>(*s_);
}

bool StateMachine::snapshot_in_progress() const { return s_->encoder != nullptr; }

bool StateMachine::snapshot_step(std::size_t max_sessions) {
  LEASEHOLD_ASSERT(s_->encoder != nullptr, "snapshot_step without begin_snapshot");
  return s_->encoder->step(*s_, max_sessions);
}

std::vector<std::string> StateMachine::finish_snapshot() {
  LEASEHOLD_ASSERT(s_->encoder != nullptr, "finish_snapshot without begin_snapshot");
  std::vector<std::string> pieces = s_->encoder->finish();
  s_->encoder.reset();
  return pieces;
}

void StateMachine::abandon_snapshot() { s_->encoder.reset(); }

std::vector<std::string> StateMachine::take_snapshot_pieces() {
  LEASEHOLD_ASSERT(s_->encoder != nullptr, "take_snapshot_pieces without begin_snapshot");
  return s_->encoder->take_pieces();
}

std::uint32_t StateMachine::snapshot_checksum(std::string_view piece, std::uint32_t crc) {
  return detail::snapshot_crc(piece, crc);
}

std::string StateMachine::snapshot_trailer(std::uint32_t crc) { return detail::SnapshotEncoder::trailer(crc); }

std::string StateMachine::join_snapshot(std::vector<std::string> pieces) {
  return detail::SnapshotEncoder::join(std::move(pieces));
}

Result<StateMachine> StateMachine::restore(std::string_view bytes, Limits limits) {
  StateMachine sm(limits);
  Status st = detail::decode_snapshot(bytes, *sm.s_);
  if (!st.is_ok()) return st;
  return sm;
}

}  // namespace leasehold::core
