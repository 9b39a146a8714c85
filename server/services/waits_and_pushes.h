// server/services/waits_and_pushes.h: WaitsAndPushes, what the server owes
// connections beyond the reply to their request: the blocking waits parked
// until the node's effect answers them, the sessions connections watch (and
// get pushes for), and which connections speak for each live session.
//
// Blocking waits: a LOCK.ACQUIRE ... WAIT that the state machine queued is
// parked under (lock, session); the Granted / WaitEnded effect answers it. A
// retry with the same SEQ re-attaches (both connections get the answer). A
// connection that closes while parked cancels the wait (CancelWait) when it
// was the last one waiting; a grant that races with that cancel is released
// again.
//
// Pushes: connections that ran SESSION.WATCH get `lost` / `session-ended`
// pushes (RESP3 only; docs/protocol.md). A LOCK.RELEASE from a connection
// that neither watches nor speaks for the session is a release by another
// (commands ask speaks_for()).
//
// Feed it every effect of the node (on_effect) and every closing connection
// (connection_closing). Once stop_cancelling() was called (shutdown), a wait
// nobody takes any more is dropped without a CancelWait.
//
// Errors: none; a wait whose connection left before it was parked is
// answered with a null reply. Ownership: holds the reply slots of parked
// waits; borrows the connection registry and the node (set by attach(),
// before the first call that proposes).
// Thread-safety: loop thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/incremental_map.h"
#include "core/state_machine.h"
#include "node/node.h"
#include "resp/writer.h"
#include "server/net/connection.h"
#include "server/net/connection_registry.h"
#include "server/net/responder.h"
#include "server/services/speaker_ids.h"

namespace leasehold::server {

class WaitsAndPushes {
 public:
  explicit WaitsAndPushes(const ConnectionRegistry& connections) : connections_(connections) {}

  // The node whose effects this answers, and to which it proposes cancels.
  void attach(node::Node& node) { node_ = &node; }
  // From now on nothing is proposed (the server is shutting down).
  void stop_cancelling() { cancelling_ = false; }

  // Parks `reply` until (lock, session)'s wait ends. `conn` is the waiting connection.
  void park(const std::string& lock, core::SessionId session, Responder reply,
            const std::shared_ptr<Connection>& conn);
  std::size_t parked_count() const { return waits_.size(); }
  // The connection gets pushes for `session` (and speaks for it).
  void watch(core::SessionId session, const std::shared_ptr<Connection>& conn);
  // The connection acts for `session` (it opened it, kept it alive or
  // acquired with it). Ends with the session or the connection. O(1): a
  // closing connection does nothing per session it spoke for (its id is
  // never reused, so it just stops matching; ids of closed connections are
  // pruned when another connection speaks for the session, and all of them
  // when the session ends).
  void speak_for(core::SessionId session, Connection& conn);
  // True if the connection watches or speaks for `session`.
  bool speaks_for(core::SessionId session, const Connection& conn) const;

  // The connection starts closing: its waits and watches end.
  void connection_closing(Connection& conn);
  // Answers parked waits (Granted, WaitEnded) and pushes to watchers
  // (LockLost, SessionEnded); forgets an ended session.
  void on_effect(const core::Effect& effect);
  // Forgets every wait, watch and speaker without answering (shutdown,
  // after the connections were closed).
  void clear();

 private:
  using WaitKey = std::pair<std::string, core::SessionId>;
  struct Parked {
    std::uint64_t conn_id = 0;
    Responder reply;
  };

  void answer_waiters(const WaitKey& key, const std::function<void(Responder&)>& answer);
  // Nobody takes (lock, session)'s wait any more: propose its CancelWait and
  // release a grant that lands before it (abandoned_).
  void abandon_wait(const WaitKey& key);
  void push_to_watchers(core::SessionId session, const std::string& kind,
                        const std::function<void(resp::Writer&)>& body, std::size_t body_items);
  // `acquired` push for a grant no blocked request takes (LOCK.TRANSFER).
  void push_acquired(const core::Granted& g);

  const ConnectionRegistry& connections_;
  node::Node* node_ = nullptr;
  bool cancelling_ = true;
  std::map<WaitKey, std::vector<Parked>> waits_;
  std::set<WaitKey> abandoned_;  // cancel in flight after the waiter left
  std::map<core::SessionId, std::set<std::uint64_t>> watchers_;
  // Connection ids that speak for each live session (see speak_for()); a
  // grow-by-one-bucket table: millions of sessions opened by a few
  // connections are the common case.
  IncrementalMap<core::SessionId, SpeakerIds> speakers_;
};

}  // namespace leasehold::server
