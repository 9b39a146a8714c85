#include "leasehold/session.h"

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/client_core.h"
#include "client/connection.h"
#include "client/decode.h"
#include "client/session_state.h"

namespace leasehold::client {
namespace {

struct OpenedSession {
  std::uint64_t id = 0;
  Clock::time_point sent;                    // when the open that succeeded was sent
  std::unique_ptr<detail::Connection> conn;  // ONCLOSE: the connection it is bound to
};

// SESSION.OPEN ... ONCLOSE on a connection of its own, which the keepalive
// thread then keeps: the session is bound to the connection that keeps it
// alive from its first moment, so no other connection this client might drop
// (a pooled one) can end it. A lost reply is retried with the same REQID on
// a new connection (the server answers the same session and binds it there),
// until the call timeout.
Result<OpenedSession> open_bound(Client& client, const SessionOptions& options, const std::string& reqid) {
  std::vector<std::string> args{"SESSION.OPEN", std::to_string(options.ttl.count())};
  if (!options.owner.empty()) {
    args.emplace_back("OWNER");
    args.emplace_back(options.owner);
  }
  args.emplace_back("ONCLOSE");
  args.emplace_back(std::to_string(options.close_grace->count()));
  args.emplace_back("REQID");
  args.emplace_back(reqid);
  detail::ClientCore& core = client.core();
  const Clock::time_point deadline = Clock::now() + core.options().call_timeout;
  Status last(ErrorCode::kTimedOut, "SESSION.OPEN: no reply before the call timeout");
  int redirects = 0;
  while (Clock::now() < deadline) {
    auto conn = core.dial(deadline, -1);
    if (!conn) return conn.status();
    OpenedSession out;
    out.sent = Clock::now();
    auto reply = (*conn)->roundtrip(args, deadline, -1, {});
    if (!reply) {
      last = reply.status();
      continue;  // the reply may be lost: the same REQID again
    }
    if (reply->is_error()) {
      Status st = detail::status_from_error_reply(reply->str);
      if (st.code() == ErrorCode::kRedirect && ++redirects <= core.options().max_redirects) {
        if (Status noted = core.note_redirect(st.message(), (*conn)->endpoint().tls); !noted) return noted;
        continue;
      }
      return st;
    }
    auto id = detail::decode_integer(*reply, "SESSION.OPEN");
    if (!id) return id.status();
    out.id = static_cast<std::uint64_t>(*id);
    out.conn = std::move(*conn);
    return out;
  }
  return last;
}

}  // namespace

Result<std::unique_ptr<Session>> Session::open(std::shared_ptr<Client> client,
                                               SessionOptions options) {
  if (!client) return Status(ErrorCode::kInvalidArgument, "no client");
  if (options.ttl <= Millis(0)) return Status(ErrorCode::kInvalidArgument, "ttl must be > 0");
  // A random REQID per open, reused by the client's retries of this open.
  std::random_device rd;
  const std::string reqid = "cc-" + std::to_string(rd()) + "-" + std::to_string(rd()) + "-" + std::to_string(rd());
  OpenedSession opened;
  if (options.close_grace) {
    auto bound = open_bound(*client, options, reqid);
    if (!bound) return bound.status();
    opened = std::move(*bound);
  } else {
    opened.sent = Clock::now();
    auto id = client->open_session(options.ttl, options.owner, std::nullopt, reqid);
    if (!id) return id.status();
    opened.id = *id;
  }
  auto state = std::make_shared<detail::SessionState>(
      client, opened.id, options, opened.sent + detail::safe_part(options.ttl, detail::drift_margin(options)));
  if (state->wake_fd < 0) {
    (void)client->close_session(opened.id);
    return Status(ErrorCode::kIoError, "cannot create an eventfd for the session");
  }
  std::unique_ptr<Session> session(new Session(state));
  session->keepalive_ = std::thread([state, conn = std::move(opened.conn), sent = opened.sent]() mutable {
    detail::run_keepalive(state, std::move(conn), sent);
  });
  // A lock taken before the keepalive connection watches the session could
  // be revoked with no one listening for its push. Wait (bounded) for the
  // watch; if it is late, the keepalive re-checks the locks taken before it.
  (void)state->wait_watching(Clock::now() + client->options().call_timeout);
  return session;
}

Session::Session(std::shared_ptr<detail::SessionState> state) : state_(std::move(state)) {}

Session::~Session() { (void)close(); }

std::uint64_t Session::id() const { return state_->id; }
Millis Session::ttl() const { return state_->ttl; }
Client& Session::client() const { return *state_->client; }
Clock::time_point Session::safe_deadline() const { return state_->deadline(); }
bool Session::lost() const { return state_->ended(); }
Status Session::status() const { return state_->status(); }
std::stop_token Session::stop_token() const { return state_->stop_token(); }

Status Session::close() {
  std::lock_guard lock(close_mu_);
  if (closed_) return Status::ok();
  closed_ = true;
  // After a deadline loss the server may still keep the session (it was
  // only unreachable): close it so its locks free now, not at its expiry.
  const Status before = state_->status();
  const bool was_live = before.is_ok() || before.code() == ErrorCode::kTimedOut;
  Status st;
  bool closed_on_server = false;
  // ONCLOSE: close on the server while the bound keepalive connection is
  // still open. Stopping the keepalive first closes that connection, and the
  // server could end the session as "closed" (an expiry: lock-delay for the
  // locks still held) before SESSION.CLOSE arrives.
  if (state_->bind && before.is_ok()) {
    state_->closing.store(true, std::memory_order_release);
    st = state_->client->close_session(state_->id);
    closed_on_server = true;
  }
  state_->end(Status(ErrorCode::kSessionExpired,
                     "session " + std::to_string(state_->id) + " closed"),
              false);
  if (keepalive_.joinable()) keepalive_.join();
  if (!was_live) return Status::ok();  // expired or killed: nothing left on the server
  if (closed_on_server) {
    // judged below as close_session() is
  } else if (before.code() == ErrorCode::kTimedOut) {
    // The server was unreachable a moment ago: one short attempt only.
    const auto bound = std::min(state_->client->options().call_timeout, Millis(500));
    auto r = state_->client->core().call({"SESSION.CLOSE", std::to_string(state_->id)},
                                         {Clock::now() + bound, detail::Retry::kIfNotSent, -1});
    st = r ? detail::decode_ok(*r, "SESSION.CLOSE") : r.status();  // judged as close_session() does
  } else {
    st = state_->client->close_session(state_->id);
  }
  if (st.code() == ErrorCode::kSessionExpired) return Status::ok();
  return st;
}

}  // namespace leasehold::client
