// server/services/waits_and_pushes.cc: parked waits, watches and pushes
// (server/services/waits_and_pushes.h).
#include "server/services/waits_and_pushes.h"

#include <string_view>
#include <variant>

#include "common/assert.h"

namespace leasehold::server {
namespace {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string_view loss_reason(core::LossReason r) {
  switch (r) {
    case core::LossReason::kExpired: return "expired";
    case core::LossReason::kKilled: return "killed";
    case core::LossReason::kRevoked: return "revoked";
    case core::LossReason::kClosed: return "closed";
    case core::LossReason::kReplaced: return "replaced";
    case core::LossReason::kReleasedByOther: return "released-by-other";
    case core::LossReason::kLeaseEnded: return "lease-ended";
    case core::LossReason::kTransferred: return "transferred";
  }
  return "unknown";
}

std::string_view end_reason(core::SessionEndReason r) {
  switch (r) {
    case core::SessionEndReason::kClosed: return "closed";
    case core::SessionEndReason::kExpired: return "expired";
    case core::SessionEndReason::kKilled: return "killed";
  }
  return "unknown";
}

}  // namespace

void WaitsAndPushes::park(const std::string& lock, core::SessionId session, Responder reply,
                          const std::shared_ptr<Connection>& conn) {
  WaitKey key{lock, session};
  if (!conn || conn->closed()) {
    // The client left before its wait was queued (the enqueue may wait for
    // the next commit: NodeOptions::enqueue_defer): nobody will take a grant.
    reply.null();
    abandon_wait(key);
    return;
  }
  waits_[key].push_back(Parked{conn->id(), std::move(reply)});
  conn->waits().insert(key);
}

void WaitsAndPushes::abandon_wait(const WaitKey& key) {
  if (!cancelling_) return;
  LEASEHOLD_ASSERT(node_ != nullptr, "a wait on {} abandoned before a node was attached", key.first);
  // Cancel the queued wait. A grant that lands before the cancel is
  // released again (see on_effect).
  abandoned_.insert(key);
  core::Command cmd;
  cmd.body = core::CancelWait{key.first, key.second};
  node_->propose(std::move(cmd), [this, key](const core::ApplyResult&) { abandoned_.erase(key); });
}

void WaitsAndPushes::watch(core::SessionId session, const std::shared_ptr<Connection>& conn) {
  watchers_[session].insert(conn->id());
  conn->watched().insert(session);
}

void WaitsAndPushes::speak_for(core::SessionId session, Connection& conn) {
  if (conn.closed()) return;
  auto found = speakers_.find(session);
  if (found == speakers_.end()) {
    LEASEHOLD_ASSERT(node_ != nullptr, "session {} spoken for before a node was attached", session);
    if (!node_->state().session(session)) return;  // ended already: nothing to clean up later
    speakers_.try_emplace(session, conn.id());
    return;
  }
  found->second.add(conn.id(), [this](std::uint64_t id) { return !connections_.contains(id); });
}

bool WaitsAndPushes::speaks_for(core::SessionId session, const Connection& conn) const {
  if (conn.watched_const().count(session) != 0) return true;
  const auto found = speakers_.find(session);
  return found != speakers_.end() && found->second.contains(conn.id());
}

void WaitsAndPushes::connection_closing(Connection& conn) {
  for (const WaitKey& key : conn.waits()) {
    auto it = waits_.find(key);
    if (it == waits_.end()) continue;
    auto& list = it->second;
    std::erase_if(list, [&](const Parked& p) { return p.conn_id == conn.id(); });
    if (!list.empty()) continue;
    waits_.erase(it);
    abandon_wait(key);  // nobody waits any more
  }
  conn.waits().clear();
  for (core::SessionId s : conn.watched()) {
    auto it = watchers_.find(s);
    if (it == watchers_.end()) continue;
    it->second.erase(conn.id());
    if (it->second.empty()) watchers_.erase(it);
  }
  conn.watched().clear();
  // Nothing for the sessions it spoke for: see speak_for().
}

void WaitsAndPushes::clear() {
  waits_.clear();
  watchers_.clear();
  speakers_ = {};
}

void WaitsAndPushes::answer_waiters(const WaitKey& key, const std::function<void(Responder&)>& answer) {
  auto it = waits_.find(key);
  if (it == waits_.end()) return;
  std::vector<Parked> list = std::move(it->second);
  waits_.erase(it);
  for (auto& p : list) {
    if (Connection* c = connections_.find(p.conn_id)) c->waits().erase(key);
    answer(p.reply);
  }
}

void WaitsAndPushes::push_to_watchers(core::SessionId session, const std::string& kind,
                                      const std::function<void(resp::Writer&)>& body, std::size_t body_items) {
  auto it = watchers_.find(session);
  if (it == watchers_.end()) return;
  const std::set<std::uint64_t> ids = it->second;  // a push may close a connection
  for (std::uint64_t id : ids) {
    Connection* c = connections_.find(id);
    if (c == nullptr || c->protocol() != resp::Protocol::kResp3) continue;
    std::string out;
    resp::Writer w(out, resp::Protocol::kResp3);
    w.push_header(2 + body_items);
    w.bulk("leasehold");
    w.bulk(kind);
    body(w);
    c->push(std::move(out));
  }
}

void WaitsAndPushes::push_acquired(const core::Granted& g) {
  // The grant's lease left, so the new holder can keep its safe deadline.
  std::int64_t lease_ms = 0;
  if (auto info = node_->state().lock(g.lock)) {
    const core::LogMillis now = node_->log_now();
    for (const core::HolderInfo& h : info->holders) {
      if (h.session == g.session && h.token == g.token && h.lease_until != 0) {
        lease_ms = h.lease_until > now ? static_cast<std::int64_t>(h.lease_until - now) : 0;
        if (lease_ms == 0) lease_ms = 1;  // due: ends at once (0 means "no lease")
      }
    }
  }
  push_to_watchers(
      g.session, "acquired",
      [&](resp::Writer& w) {
        w.integer(static_cast<std::int64_t>(g.session));
        w.bulk(g.lock);
        w.integer(static_cast<std::int64_t>(g.token));
        w.integer(lease_ms);
      },
      4);
}

void WaitsAndPushes::on_effect(const core::Effect& effect) {
  std::visit(
      Overloaded{
          [&](const core::Granted& g) {
            WaitKey key{g.lock, g.session};
            if (waits_.count(key) != 0) {
              const auto token = static_cast<std::int64_t>(g.token);
              answer_waiters(key, [token](Responder& r) { r.integer(token); });
            } else if (abandoned_.erase(key) != 0) {
              core::Command cmd;
              cmd.body = core::Release{g.lock, g.session, g.token};
              node_->propose(std::move(cmd), nullptr);
            } else {
              push_acquired(g);  // no blocked request to answer (LOCK.TRANSFER): tell the watchers
            }
          },
          [&](const core::WaitEnded& w) {
            WaitKey key{w.lock, w.session};
            abandoned_.erase(key);
            if (w.reason == core::WaitEndReason::kSessionEnded) {
              answer_waiters(key, [](Responder& r) {
                r.error(Status(ErrorCode::kSessionExpired, "the session ended while waiting"));
              });
            } else {
              answer_waiters(key, [](Responder& r) { r.null(); });
            }
          },
          [&](const core::LockLost& l) {
            const std::string reason(loss_reason(l.reason));
            push_to_watchers(
                l.session, "lost",
                [&](resp::Writer& w) {
                  w.integer(static_cast<std::int64_t>(l.session));
                  w.bulk(l.lock);
                  w.integer(static_cast<std::int64_t>(l.token));
                  w.bulk(reason);
                },
                4);
          },
          [&](const core::SessionEnded& s) {
            const std::string reason(end_reason(s.reason));
            push_to_watchers(
                s.session, "session-ended",
                [&](resp::Writer& w) {
                  w.integer(static_cast<std::int64_t>(s.session));
                  w.bulk(reason);
                },
                2);
            auto it = watchers_.find(s.session);
            if (it != watchers_.end()) {
              for (std::uint64_t id : it->second) {
                if (Connection* c = connections_.find(id)) c->watched().erase(s.session);
              }
              watchers_.erase(it);
            }
            speakers_.erase(s.session);
          },
          [&](const auto&) {},
      },
      effect);
}

}  // namespace leasehold::server
