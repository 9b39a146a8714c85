// core/reopen.cc: the Reopen command (core/command.h): a revision floor, the
// expiry of every session and a grant quarantine after a start that cannot
// prove its log complete.
#include <algorithm>
#include <vector>

#include "core/quarantine.h"
#include "core/state.h"

namespace leasehold::core {

LogMillis quarantine_end(const Reopen& reopen, LogMillis now) {
  return detail::saturating_add(now, reopen.quarantine_ms);
}

namespace detail {

bool grants_paused(const Ctx& c) { return c.s.paused_until > c.now; }

Reply apply_reopen(Ctx& c, const Reopen& r) {
  // The revision (and so this command's own token-space position) jumps
  // first: every token and session id from here on is above the floor.
  c.rev = std::max(c.rev, r.revision_floor);
  // The quarantine first, so that ending the sessions below grants nothing.
  if (r.quarantine_ms > 0) {
    c.s.paused_until = std::max(c.s.paused_until, quarantine_end(r, c.now));
    // Not a compat key's lock: its SETs are held back by grants_paused()
    // (compat.cc), and a delay on it would outlive the key and wedge it (a
    // shape the snapshot decoder refuses, so the node could not restart).
    std::vector<LockEntry*> entries;
    entries.reserve(c.s.locks.size());
    for (LockEntry& e : c.s.locks) {
      if (!e.second.compat) entries.push_back(&e);
    }
    for (LockEntry* e : entries) set_delay(c.s, *e, std::max(e->second.delay_until, c.s.paused_until));
    c.effects.emplace_back(WakeAt{c.s.paused_until});
  }
  if (r.expire_sessions) {
    std::vector<SessionId> ids;
    ids.reserve(c.s.sessions.size());
    for (const auto& [id, sess] : c.s.sessions) {
      if (sess.ttl_ms != 0) ids.push_back(id);  // compat keys without PX never expire
    }
    std::sort(ids.begin(), ids.end());  // canonical order: replay gives the same effects
    for (SessionId id : ids) end_session(c, id, EndKind::kExpire);
  }
  return Reply::ok();
}

}  // namespace detail
}  // namespace leasehold::core
