// resp/parser.h: incremental RESP parser for requests (server side) and
// replies (client side).
//
// Feed it the unconsumed bytes of a connection; it returns one of
//   kValue     one complete value (a request is an array of bulk strings),
//   kNeedMore  no complete value yet: append more bytes and call again,
//   kError     the framing is broken ("Protocol error: ..."); the stream
//              cannot be resynchronised, so every later call repeats the error.
// In every case `consumed` bytes at the front of the input were used and must
// be dropped by the caller before the next call (partial aggregates are kept
// inside the parser; a scalar is consumed only when it is complete).
//
// Limits: every claimed length is checked against ParserLimits before any
// byte of its payload is awaited, and nothing is reserved from a claimed
// length, so hostile headers cost nothing. The memory a partial frame holds is
// bounded by max_frame_bytes (payload bytes plus sizeof(Value) per element).
//
// Request mode accepts what Redis accepts: `*N` arrays of `$` bulk strings
// (`*0`/`*-1` are skipped) and inline commands (a line, split on whitespace
// with "double" and 'single' quotes). Reply mode accepts every RESP2/RESP3
// type, nested up to max_depth.
//
// Thread-safety: none; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "resp/value.h"

namespace leasehold::resp {

struct ParserLimits {
  std::size_t max_bulk_bytes = 1024 * 1024;       // one bulk / simple string payload
  std::size_t max_array_len = 1024 * 1024;        // elements of one aggregate
  std::size_t max_inline_bytes = 64 * 1024;       // one inline command line
  std::size_t max_depth = 32;                     // nesting of aggregates (replies)
  std::size_t max_frame_bytes = 64 * 1024 * 1024; // one top-level frame, see above
};

enum class ParseStatus : std::uint8_t { kNeedMore, kValue, kError };

struct ParseOutcome {
  ParseStatus status = ParseStatus::kNeedMore;
  std::size_t consumed = 0;
  Value value;        // kValue only
  std::string error;  // kError only: "Protocol error: ..."
};

class Parser {
 public:
  enum class Mode : std::uint8_t { kRequest, kReply };

  explicit Parser(Mode mode, ParserLimits limits = {});

  ParseOutcome parse(std::string_view input);
  // New limits for the frames that follow. Call only between frames
  // (!mid_frame()): a frame is checked against one set of limits.
  void set_limits(const ParserLimits& limits) { limits_ = limits; }

  // True while a frame has been partly consumed (for idle-timeout decisions).
  bool mid_frame() const { return !stack_.empty() || frame_cost_ > 0; }
  bool failed() const { return !error_.empty(); }
  const ParserLimits& limits() const { return limits_; }

 private:
  struct Partial {
    Value aggregate;
    std::size_t remaining = 0;
  };
  enum class Step : std::uint8_t { kItem, kSkipped, kNeedMore, kError };
  static constexpr std::size_t kReserveElements = 16;

  void reserve_elements(Partial& partial);

  Step parse_item(std::string_view in, std::size_t& pos, Value& out);
  Step parse_inline(std::string_view in, std::size_t& pos, Value& out);
  Step parse_request_header(std::string_view in, std::size_t& pos, Value& out);
  Step fail(std::string message);
  // Adds a finished item to the open aggregate; true when a top-level value is done.
  bool deliver(Value& item);
  bool charge(std::size_t bytes);

  Mode mode_;
  ParserLimits limits_;
  std::vector<Partial> stack_;
  std::size_t frame_cost_ = 0;
  std::string error_;
};

// Splits an inline command line like Redis: whitespace separates arguments,
// "double quotes" take \n \r \t \b \a \\ \" \xHH escapes, 'single quotes' take \'.
// Returns false on unbalanced quotes.
bool split_inline(std::string_view line, std::vector<std::string>& args);

}  // namespace leasehold::resp
