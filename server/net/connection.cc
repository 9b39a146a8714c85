#include "server/net/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "server/base/args.h"
#include "server/net/read_budget.h"

namespace leasehold::server {

namespace {
struct WriteRequest {
  uv_write_t req{};
  std::string bytes;
  std::shared_ptr<Connection> keep;
};
}  // namespace

void Responder::error(const Status& status) {
  if (status.code() == ErrorCode::kRedirect) {
    // A redirect keeps the client's scheme: a TLS client goes to the primary's TLS address.
    auto conn = conn_.lock();
    if (conn && conn->tls()) {
      const std::string target = conn->host().primary_for(status.message(), true);
      const Status redirect = target.empty() ? Status(ErrorCode::kUnavailable,
                                                      "the primary " + status.message() +
                                                          " advertises no TLS address (its --tls-listen)")
                                             : Status(ErrorCode::kRedirect, target);
      const std::string text = leasehold::server::error_text(redirect);
      return write([&text](resp::Writer& w) { w.error(text); });
    }
  }
  const std::string text = leasehold::server::error_text(status);
  write([&text](resp::Writer& w) { w.error(text); });
}

void Responder::finish(std::string bytes) {
  if (slot_->done) return;
  slot_->bytes = std::move(bytes);
  slot_->done = true;
  if (auto conn = conn_.lock()) conn->on_slot_done();
}

Connection::Connection(ConnectionHost& host, std::uint64_t id, std::shared_ptr<TlsContext> tls)
    : host_(host), id_(id), parser_(resp::Parser::Mode::kRequest, host.config().protocol),
      connected_at_(Clock::now()),
      request_started_(connected_at_) {
  tcp_.data = this;
  if (tls) tls_ = std::make_unique<TlsStream>(tls);
}

Connection::~Connection() = default;

void Connection::start(std::string peer) {
  peer_ = std::move(peer);
  update_reading();
}

void Connection::close(std::string_view reason) {
  if (closed_) return;
  closed_ = true;
  spdlog::debug("client closed id={} peer={} reason=\"{}\"", id_, peer_, reason);
  if (reading_) uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  reading_ = false;
  host_.on_connection_closing(*this);
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), [](uv_handle_t* h) {
    auto* self = static_cast<Connection*>(h->data);
    self->host_.forget_connection(self->id_);
  });
}

bool Connection::blocked() const {
  return !queue_.empty() && queue_.front().blocking && queue_.front().started &&
         !queue_.front().slot->done;
}

bool Connection::idle_expired(Clock::time_point now, std::chrono::milliseconds timeout) const {
  if (timeout.count() <= 0 || closed_) return false;
  const bool partial = rbuf_.size() > rpos_ || parser_.mid_frame();
  if (partial) {
    // Bytes this server stopped reading (a full pipeline, the read budget)
    // wait on the server, not on the client.
    if (!may_parse()) return false;
    return now - request_started_ > timeout;
  }
  return !ever_completed_ && now - connected_at_ > timeout;
}

bool Connection::paused_for_auth() const {
  if (!user_.empty() || !host_.auth_required()) return false;
  for (const Pending& p : queue_) {
    if (p.no_auth && !p.slot->done) return true;
  }
  return false;
}

bool Connection::may_parse() const {
  return !stop_parsing_ && !awaiting_budget_ && room_to_queue() && !paused_for_auth();
}

void Connection::choose_limits() {
  const bool unauthenticated = user_.empty() && host_.auth_required();
  if (unauthenticated == unauthenticated_limits_) return;
  const resp::ParserLimits& configured = host_.config().protocol;
  resp::ParserLimits limits = configured;
  if (unauthenticated) {
    limits.max_bulk_bytes = std::min(configured.max_bulk_bytes, kUnauthenticatedLimits.max_bulk_bytes);
    limits.max_array_len = std::min(configured.max_array_len, kUnauthenticatedLimits.max_array_len);
    limits.max_inline_bytes = std::min(configured.max_inline_bytes, kUnauthenticatedLimits.max_inline_bytes);
    limits.max_frame_bytes = std::min(configured.max_frame_bytes, kUnauthenticatedLimits.max_frame_bytes);
  }
  parser_.set_limits(limits);
  unauthenticated_limits_ = unauthenticated;
}

bool Connection::room_to_queue() const {
  const ServerConfig& cfg = host_.config();
  return queue_.size() < cfg.max_pipeline && queued_bytes_ < cfg.max_pipeline_bytes;
}

void Connection::erase_queued(std::size_t from) {
  for (std::size_t i = from; i < queue_.size(); ++i) queued_bytes_ -= queue_[i].bytes;
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(from), queue_.end());
}

void Connection::on_read(ssize_t nread, const uv_buf_t* buf) {
  if (closed_) return;
  if (nread < 0) {
    closed_by_peer_ = true;
    close(nread == UV_EOF ? "eof" : uv_strerror(static_cast<int>(nread)));
    return;
  }
  if (nread == 0) return;
  host_.count_read();
  if (rbuf_.size() == rpos_ && !parser_.mid_frame()) request_started_ = Clock::now();  // a new request begins
  if (tls_) {
    if (!tls_input(std::string_view(buf->base, static_cast<std::size_t>(nread)))) return;
  } else {
    rbuf_.append(buf->base, static_cast<std::size_t>(nread));
  }
  // Connections already wait for the budget (server/net/read_budget.h), or this
  // turn has spent it: the bytes wait, unparsed, for a later turn.
  if (awaiting_budget_) return;
  ReadBudget& budget = host_.read_budget();
  if ((budget.waiting() || budget.spent()) && wait_for_budget()) return;
  const ReadBudget::Meter meter(budget);
  parse_available();
  pump();
}

bool Connection::wait_for_budget() {
  if (awaiting_budget_) return true;
  if (!host_.read_budget().defer(weak_from_this())) return false;
  awaiting_budget_ = true;
  update_reading();  // stops reading: a client that keeps sending meets TCP back-pressure
  return true;
}

void Connection::resume_parsing() {
  if (closed_ || !awaiting_budget_) return;
  awaiting_budget_ = false;
  const ReadBudget::Meter meter(host_.read_budget());
  parse_available();
  pump();
}

void Connection::parse_available() {
  const ReadBudget::Meter meter(host_.read_budget());  // charged once when nested
  std::size_t parsed_here = 0;
  while (!closed_ && may_parse() && rpos_ < rbuf_.size()) {
    // At least one request per call (progress), then only within this turn's budget.
    if (parsed_here != 0 && host_.read_budget().spent() && wait_for_budget()) break;
    ++parsed_here;
    if (!parser_.mid_frame()) choose_limits();
    resp::ParseOutcome o = parser_.parse(std::string_view(rbuf_).substr(rpos_));
    rpos_ += o.consumed;
    if (o.status == resp::ParseStatus::kNeedMore) break;
    if (o.status == resp::ParseStatus::kError) {
      spdlog::info("client protocol error id={} peer={} error=\"{}\"", id_, peer_, o.error);
      std::string out;
      resp::Writer(out, protocol_).error("ERR " + o.error);
      enqueue_done(std::move(out));
      ++requests_parsed_;
      stop_parsing_ = true;
      close_after_flush_ = true;
      rbuf_.clear();
      rpos_ = 0;
      break;
    }
    ever_completed_ = true;
    request_started_ = Clock::now();  // what follows in rbuf_ started no earlier
    ++requests_parsed_;
    enqueue(std::move(o.value));
  }
  if (rpos_ == rbuf_.size()) {
    rbuf_.clear();
    rpos_ = 0;
  } else if (rpos_ > 4096 && rpos_ * 2 > rbuf_.size()) {
    rbuf_.erase(0, rpos_);
    rpos_ = 0;
  }
  update_reading();
}

void Connection::enqueue_done(std::string bytes) {
  Pending p;
  p.slot = std::make_shared<ReplySlot>();
  p.slot->bytes = std::move(bytes);
  p.slot->done = true;
  p.started = true;
  queue_.push_back(std::move(p));
}

void Connection::enqueue(resp::Value request) {
  Pending p;
  p.args.reserve(request.elements.size());
  for (auto& e : request.elements) {
    p.bytes += e.str.size();
    p.args.push_back(std::move(e.str));
  }
  RequestKind kind = host_.classify(p.args);
  if (kind.spec == nullptr) {
    std::string out;
    resp::Writer(out, protocol_).error(kind.error);
    enqueue_done(std::move(out));
    return;
  }
  p.spec = kind.spec;
  p.blocking = kind.blocking;
  p.write = kind.write;
  p.no_auth = kind.no_auth;
  p.pipelinable = p.write && !p.blocking;
  p.slot = std::make_shared<ReplySlot>();
  queued_bytes_ += p.bytes;
  queue_.push_back(std::move(p));
}

void Connection::on_slot_done() {
  if (pumping_) {
    repump_ = true;
    return;
  }
  if (pump_deferred_) return;
  // A blocking request at the head, now answered: a client that waited
  // (a lock granted to it) goes out ahead of the phase's other replies.
  const bool waited = !queue_.empty() && queue_.front().blocking && queue_.front().slot->done;
  pump_deferred_ = host_.defer_pump(weak_from_this(), waited);
  if (!pump_deferred_) pump();
}

void Connection::run_deferred_pump() {
  pump_deferred_ = false;
  pump();
}

void Connection::pump() {
  if (closed_) return;
  if (pumping_) {
    repump_ = true;
    return;
  }
  auto keep = shared_from_this();
  pumping_ = true;
  // One loop, never a self-call: every pass either starts or finishes
  // something, or parses at least one more request out of rbuf_; a pass that
  // does none of these ends the loop (a partial frame behind a request that
  // waits for a commit used to recurse once per pass until the stack ran out).
  do {
    repump_ = false;
    run_ready();
    if (closed_) break;
    if (may_parse() && rbuf_.size() > rpos_) {
      const std::uint64_t before = requests_parsed_;
      parse_available();
      if (requests_parsed_ != before) repump_ = true;
    }
  } while (repump_ && !closed_);
  pumping_ = false;
  if (closed_) return;
  flush_output();
  update_reading();
}

void Connection::run_ready() {
  while (!queue_.empty() && queue_.front().slot->done) {
    append_output(queue_.front().slot->bytes);
    queued_bytes_ -= queue_.front().bytes;
    queue_.pop_front();
    if (closed_) return;
  }
  bool all_done_before = true;
  bool only_pipelinable_before = true;
  for (std::size_t i = 0; i < queue_.size() && !closed_; ++i) {
    Pending& p = queue_[i];
    if (!p.started) {
      // A write (also a blocking one) may follow uncommitted writes: the
      // node applies them in proposal order. Nothing starts behind a
      // blocking request (it is not pipelinable) until it is answered.
      const bool can = all_done_before || (p.write && only_pipelinable_before);
      if (!can) return;
      p.started = true;
      execute(p);
      if (closed_) return;
      if (quit_requested_) {
        // QUIT: nothing behind it runs.
        quit_requested_ = false;
        erase_queued(i + 1);
        stop_parsing_ = true;
      }
    }
    if (!queue_[i].slot->done) {
      all_done_before = false;
      if (!queue_[i].pipelinable) only_pipelinable_before = false;
    }
  }
}

void Connection::execute(Pending& p) {
  auto self = shared_from_this();
  host_.count_command();
  host_.execute(self, *p.spec, p.args, Responder(p.slot, weak_from_this(), protocol_));
}

void Connection::push(std::string bytes) {
  if (closed_) return;
  // Replies filled before this push go out before it, as they would have
  // if their pump had not been deferred.
  if (pump_deferred_ && !pumping_) run_deferred_pump();
  if (closed_) return;
  append_output(bytes);
  flush_output();
}

void Connection::append_output(const std::string& bytes) {
  wbuf_ += bytes;
  if (output_bytes() > host_.config().max_output_bytes) {
    spdlog::warn("client output buffer limit id={} peer={} bytes={}", id_, peer_, output_bytes());
    close("output buffer limit");
  }
}

bool Connection::tls_input(std::string_view cipher) {
  const bool was_done = tls_->handshake_done();
  Status st = tls_->feed(cipher, rbuf_);
  if (!was_done && tls_->handshake_done()) {
    const std::string cn = tls_->peer_common_name();
    if (!cn.empty()) host_.on_tls_client_certificate(*this, cn);
  }
  if (!st) {
    if (st.code() == ErrorCode::kNotFound) {
      closed_by_peer_ = true;
      close("tls close_notify");
      return false;
    }
    // The alert (if any) still goes out; then the connection closes.
    spdlog::warn("client TLS error id={} peer={} error=\"{}\"", id_, peer_, st.message());
    stop_parsing_ = true;
    close_after_flush_ = true;
    erase_queued(0);
    rbuf_.clear();
    rpos_ = 0;
  }
  flush_output();  // handshake records or the alert
  return !closed_;
}

std::string* Connection::socket_output() {
  if (!tls_) return &wbuf_;
  if (!wbuf_.empty() && tls_->handshake_done()) {
    Status st = tls_->encrypt(wbuf_);
    wbuf_.clear();
    if (!st) {
      spdlog::warn("client TLS error id={} peer={} error=\"{}\"", id_, peer_, st.message());
      close("tls write failed");
      return nullptr;
    }
  }
  tls_->drain(tls_out_);
  return &tls_out_;
}

void Connection::flush_output() {
  if (closed_ || write_in_flight_) return;
  std::string* out = socket_output();
  if (out == nullptr) return;
  if (!out->empty()) {
    // Usually the socket takes everything at once: one write(2), no
    // uv_write_t, no allocation, no epoll change. The rest (if any) goes
    // through uv_write below.
    host_.flush_audit_history();  // the records of what these bytes answer first
    uv_buf_t now = uv_buf_init(out->data(), static_cast<unsigned int>(out->size()));
    host_.count_write();
    const int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &now, 1);
    if (n > 0) {
      out->erase(0, static_cast<std::size_t>(n));
    } else if (n != UV_EAGAIN) {
      closed_by_peer_ = true;  // EPIPE, ECONNRESET: the peer's side is gone
      close(uv_strerror(n));
      return;
    }
  }
  if (out->empty()) {
    if (close_after_flush_ && queue_.empty()) {
      closed_by_peer_ = quit_;  // QUIT, not an error of ours
      close(quit_ ? "quit" : "after error reply");
    }
    return;
  }
  auto* w = new WriteRequest;
  w->bytes.swap(*out);
  w->keep = shared_from_this();
  w->req.data = w;
  inflight_bytes_ = w->bytes.size();
  write_in_flight_ = true;
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned int>(w->bytes.size()));
  host_.count_write();
  const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, &Connection::on_write);
  if (rc != 0) {
    delete w;
    write_in_flight_ = false;
    inflight_bytes_ = 0;
    close(uv_strerror(rc));
  }
}

void Connection::on_write(uv_write_t* req, int status) {
  auto* w = static_cast<WriteRequest*>(req->data);
  std::shared_ptr<Connection> self = std::move(w->keep);
  delete w;
  self->write_in_flight_ = false;
  self->inflight_bytes_ = 0;
  if (self->closed_) return;
  if (status != 0) {
    self->closed_by_peer_ = true;  // the write failed: the peer's side is gone
    self->close(uv_strerror(status));
    return;
  }
  self->flush_output();
}

void Connection::alloc_read_buffer(uv_handle_t*, std::size_t, uv_buf_t* buf) {
  static thread_local std::array<char, 64 * 1024> buffer;
  *buf = uv_buf_init(buffer.data(), static_cast<unsigned int>(buffer.size()));
}

void Connection::update_reading() {
  if (closed_) return;
  const bool want = may_parse();
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  if (want && !reading_) {
    const int rc = uv_read_start(
        stream, &Connection::alloc_read_buffer,
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* b) { static_cast<Connection*>(s->data)->on_read(n, b); });
    if (rc != 0) {
      close(uv_strerror(rc));
      return;
    }
    reading_ = true;
  } else if (!want && reading_) {
    uv_read_stop(stream);
    reading_ = false;
  }
}

}  // namespace leasehold::server
