// server/net/responder.h: completes one request's reply slot, now or later.
//
// Each parsed request owns a ReplySlot in its connection's queue; replies
// leave in request order (pipelining). A Responder is a copyable handle to
// that slot: the first finish() fills it and wakes the connection; later
// calls are ignored. If the connection is gone the reply is dropped.
//
// Thread-safety: loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "leasehold/status.h"
#include "resp/writer.h"

namespace leasehold::server {

class Connection;

struct ReplySlot {
  std::string bytes;
  bool done = false;
};

class Responder {
 public:
  Responder(std::shared_ptr<ReplySlot> slot, std::weak_ptr<Connection> conn, resp::Protocol protocol)
      : slot_(std::move(slot)), conn_(std::move(conn)), protocol_(protocol) {}

  resp::Protocol protocol() const { return protocol_; }
  bool done() const { return slot_->done; }
  std::shared_ptr<Connection> connection() const { return conn_.lock(); }

  template <typename Fn>
  void write(Fn&& fn) {
    std::string out;
    resp::Writer w(out, protocol_);
    fn(w);
    finish(std::move(out));
  }
  void ok() { write([](resp::Writer& w) { w.ok(); }); }
  void integer(std::int64_t v) { write([v](resp::Writer& w) { w.integer(v); }); }
  void null() { write([](resp::Writer& w) { w.null(); }); }
  void bulk(std::string_view s) { write([s](resp::Writer& w) { w.bulk(s); }); }
  void error(const Status& status);
  void error_text(std::string_view text) { write([text](resp::Writer& w) { w.error(text); }); }

  void finish(std::string bytes);

 private:
  std::shared_ptr<ReplySlot> slot_;
  std::weak_ptr<Connection> conn_;
  resp::Protocol protocol_;
};

}  // namespace leasehold::server
