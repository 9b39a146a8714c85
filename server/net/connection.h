// server/net/connection.h: one client connection on the loop.
//
// Reads into a bounded buffer, parses requests incrementally (resp::Parser),
// queues them with one reply slot each and writes replies in request order.
// Execution order (pipelining):
//   - a write command (kWrite) may start while earlier writes are still being
//     committed (the node applies them in proposal order);
//   - any other command starts only when every earlier one has its reply
//     (reads see this connection's earlier writes);
//   - a blocking write (LOCK.ACQUIRE ... WAIT) may also start behind
//     uncommitted writes (so `RELEASE` + `ACQUIRE ... WAIT` sent together
//     share one group commit), but it is a barrier: nothing
//     behind it starts until it is answered (like BLPOP).
// Fairness: a turn of the loop parses requests only for its read budget
// (server/net/read_budget.h); a connection read after that keeps its bytes,
// stops reading and is resumed in a later turn, in arrival order.
// Limits: while the server requires authentication and the connection has
// none, a request may have at most 16 arguments of 16 KiB and 64 KiB in all
// (kUnauthenticatedLimits; more is a protocol error that closes it); at
// most max_pipeline queued requests, and argument bytes of queued
// requests up to max_pipeline_bytes (then reading pauses), at
// most max_output_bytes of unsent output (then the client is disconnected),
// a framing error is answered with "-ERR Protocol error: ..." and the
// connection is closed after that reply.
//
// TLS (server/net/tls.h): a connection accepted on the TLS listener owns a
// TlsStream; bytes read from the socket go through it to rbuf_, replies in
// wbuf_ go through it to tls_out_, and everything else is the same code.
//
// Everything a connection asks of the server goes through ConnectionHost
// (server/net/connection_host.h).
//
// Lifetime: owned by the Server through a shared_ptr until libuv's close
// callback; Responders hold weak_ptrs.
// Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/types.h"
#include "resp/parser.h"
#include "server/net/connection_host.h"
#include "server/net/read_budget.h"
#include "server/net/responder.h"
#include "server/net/tls.h"

namespace leasehold::server {

// The request limits of a connection that must authenticate and has not:
// enough for AUTH and HELLO ... AUTH ... SETNAME, nothing bigger (Redis
// allows an unauthenticated client 10 arguments of 16 KiB). Each is at most
// the configured limit.
inline constexpr resp::ParserLimits kUnauthenticatedLimits{
    .max_bulk_bytes = 16 * 1024, .max_array_len = 16, .max_inline_bytes = 16 * 1024,
    .max_frame_bytes = 64 * 1024};


class Connection final : public BudgetWaiter, public std::enable_shared_from_this<Connection> {
 public:
  using Clock = std::chrono::steady_clock;

  // `tls`: the context of the TLS listener, or nullptr for a plain connection.
  Connection(ConnectionHost& host, std::uint64_t id, std::shared_ptr<TlsContext> tls = nullptr);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uv_tcp_t* handle() { return &tcp_; }
  // Starts reading (after uv_accept succeeded).
  void start(std::string peer);
  // Closes now (pending replies are dropped). Idempotent.
  void close(std::string_view reason);
  bool closed() const override { return closed_; }
  // The close came from the peer: its FIN or RST, a write the peer's side
  // broke, a TLS close_notify, or QUIT. False for closes of this server's
  // own (idle timeout, output limit, protocol or TLS error, shutdown).
  // ONCLOSE sessions end only on the former.
  bool closed_by_peer() const { return closed_by_peer_; }
  // Closes after the replies queued so far are written (QUIT).
  void close_after_replies() {
    close_after_flush_ = true;
    quit_requested_ = true;
    quit_ = true;
    stop_parsing_ = true;
  }

  std::uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  resp::Protocol protocol() const { return protocol_; }
  void set_protocol(resp::Protocol p) { protocol_ = p; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  // READONLY / READWRITE: a standby may answer this connection's reads from
  // its (possibly stale) applied state (server/commands/read_gate.h).
  bool stale_reads() const { return stale_reads_; }
  void set_stale_reads(bool on) { stale_reads_ = on; }
  // The user this connection acts as (server/security/acl.h); "" = not authenticated.
  // Every command re-reads the user from the server's current table, so a
  // reload that removes or disables it takes effect at the next command.
  const std::string& user() const { return user_; }
  void set_user(std::string user) { user_ = std::move(user); }
  // Failed AUTH attempts in a row on this connection (each slows its reply more).
  unsigned auth_failures() const { return auth_failures_; }
  void set_auth_failures(unsigned n) { auth_failures_ = n; }

  // Out-of-band bytes (a RESP3 push), queued for writing now.
  void push(std::string bytes);
  // A reply slot was filled: the connection is pumped (its finished replies
  // written, what can start started) by the server's DeferredPumps later in
  // this loop phase, once for all the replies filled meanwhile; at once
  // while the loop's handles are closed (shutdown).
  void on_slot_done();
  // DeferredPumps::run() only.
  void run_deferred_pump();

  // Sessions this connection watches and waits it is blocked on (lock, session).
  std::set<core::SessionId>& watched() { return watched_; }
  const std::set<core::SessionId>& watched_const() const { return watched_; }
  std::set<std::pair<std::string, core::SessionId>>& waits() { return waits_; }

  // True when the connection's partial request started, or (with no partial
  // request) the connection never completed a command since it connected,
  // longer than `timeout` ago (ServerConfig::idle_timeout). Bytes that
  // complete nothing (empty lines, `*0`, a TLS handshake) do not count.
  bool idle_expired(Clock::time_point now, std::chrono::milliseconds timeout) const;
  std::size_t queued() const { return queue_.size(); }
  std::size_t output_bytes() const { return wbuf_.size() + tls_out_.size() + inflight_bytes_; }
  bool tls() const { return tls_ != nullptr; }
  ConnectionHost& host() const { return host_; }
  bool blocked() const;

  // ReadBudget::run() only: parses what waited for a later turn's budget
  // (server/net/read_budget.h), starts it and reads again.
  void resume_parsing() override;

  // libuv glue.
  void on_read(ssize_t nread, const uv_buf_t* buf);
  // One read buffer per loop thread: a read is parsed (or copied) before the next.
  static void alloc_read_buffer(uv_handle_t* handle, std::size_t suggested, uv_buf_t* buf);

 private:
  struct Pending {
    std::vector<std::string> args;
    const CommandSpec* spec = nullptr;
    std::shared_ptr<ReplySlot> slot;
    bool started = false;
    bool write = false;        // kWrite: may start behind uncommitted writes
    bool pipelinable = false;  // a non-blocking write (later writes may start behind it)
    bool blocking = false;
    bool no_auth = false;      // AUTH / HELLO / QUIT (paused_for_auth)
    std::size_t bytes = 0;     // the arguments' bytes (counted in queued_bytes_)
  };
  // Room to parse one more request: under max_pipeline and max_pipeline_bytes.
  bool room_to_queue() const;
  // True while the server requires authentication, this connection has none,
  // and an AUTH / HELLO / QUIT it sent is not answered yet: nothing after it
  // is parsed (or read) until it is, so that what follows a successful AUTH
  // is parsed with the full limits (before it, a frame is parsed with
  // kUnauthenticatedLimits, as Redis does).
  bool paused_for_auth() const;
  // Parsing may go on: not stopped, not waiting for the read budget, room to
  // queue, not paused for authentication.
  bool may_parse() const;
  // Before a frame: the unauthenticated limits or the configured ones.
  void choose_limits();
  // Removes queue_[from..] and their bytes from queued_bytes_.
  void erase_queued(std::size_t from);

  // Parses buffered requests: at least one, then while this turn's read
  // budget lasts (the rest waits for a later turn: wait_for_budget()).
  void parse_available();
  // Queues this connection in the server's ReadBudget and stops reading
  // until it is resumed. False when the budget is off (parse now).
  bool wait_for_budget();
  void enqueue(resp::Value request);
  void enqueue_done(std::string bytes);
  // Starts what may start, writes what is answered, parses what is buffered;
  // loops until nothing moves. Re-entrant calls (a reply filled inside
  // execute()) only mark another pass. Bounded: no recursion.
  void pump();
  // One pass over the queue: moves finished replies to the output buffer and
  // starts every request whose ordering rule allows it.
  void run_ready();
  void execute(Pending& p);
  void append_output(const std::string& bytes);
  void flush_output();
  void update_reading();
  // TLS: decrypts `cipher` into rbuf_ (false: the connection was closed).
  bool tls_input(std::string_view cipher);
  // The bytes to put on the socket: wbuf_ itself, or (TLS) wbuf_ encrypted
  // into tls_out_. nullptr when the connection was closed.
  std::string* socket_output();
  static void on_write(uv_write_t* req, int status);

  ConnectionHost& host_;
  std::uint64_t id_;
  uv_tcp_t tcp_{};
  std::string peer_;
  std::string name_;
  resp::Protocol protocol_ = resp::Protocol::kResp2;
  resp::Parser parser_;

  std::string rbuf_;
  std::size_t rpos_ = 0;
  std::deque<Pending> queue_;
  std::string wbuf_;
  std::unique_ptr<TlsStream> tls_;
  std::string tls_out_;  // ciphertext not yet written
  std::size_t inflight_bytes_ = 0;
  bool write_in_flight_ = false;

  bool closed_ = false;
  bool reading_ = false;
  bool stop_parsing_ = false;
  bool close_after_flush_ = false;
  bool closed_by_peer_ = false;  // closed_by_peer()
  bool quit_requested_ = false;  // QUIT ran: drop what follows it (the pump clears it)
  bool quit_ = false;            // close_after_replies() was called (kept: the close is the peer's)
  bool pumping_ = false;
  bool repump_ = false;
  bool pump_deferred_ = false;  // added to the server's DeferredPumps, not yet run
  bool awaiting_budget_ = false;  // queued in the server's ReadBudget: not parsing, not reading
  std::uint64_t requests_parsed_ = 0;  // frames taken off rbuf_ (progress for pump)

  bool ever_completed_ = false;
  bool stale_reads_ = false;
  std::string user_;
  unsigned auth_failures_ = 0;
  Clock::time_point connected_at_;
  Clock::time_point request_started_;  // first byte of the current partial request
  std::size_t queued_bytes_ = 0;       // Pending::bytes of queue_
  bool unauthenticated_limits_ = false;  // the parser has kUnauthenticatedLimits

  std::set<core::SessionId> watched_;
  std::set<std::pair<std::string, core::SessionId>> waits_;
};

}  // namespace leasehold::server
