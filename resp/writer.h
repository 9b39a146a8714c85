// resp/writer.h: RESP encoders that append to a std::string.
//
// A Writer speaks one protocol version. In RESP2 the RESP3-only types are
// downgraded the way Redis does it: a map becomes a flat array of 2n
// elements, a set an array, null `$-1` (or `*-1` via null_array()), a double
// a bulk string, a boolean the integer 1/0, a verbatim string a bulk string.
// A push is only meaningful in RESP3; in RESP2 it is written as an array
// (callers should not send pushes to RESP2 connections).
//
// Aggregates are written as a header followed by exactly that many elements
// (2n for a map); the writer does not check the count.
//
// Errors: none (encoding cannot fail). Error text must not contain CR or LF;
// error() replaces them with spaces.
//
// Thread-safety: none; the Writer borrows `out` for its lifetime.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "resp/value.h"

namespace leasehold::resp {

class Writer {
 public:
  Writer(std::string& out, Protocol protocol) : out_(out), protocol_(protocol) {}

  Protocol protocol() const { return protocol_; }
  bool resp3() const { return protocol_ == Protocol::kResp3; }

  void simple(std::string_view text);      // +text (CR/LF replaced by spaces)
  void error(std::string_view text);       // -text, e.g. "ERR unknown command"
  void integer(std::int64_t value);        // :n
  void bulk(std::string_view bytes);       // $n bytes
  void null();                             // RESP3 _, RESP2 $-1
  void null_array();                       // RESP3 _, RESP2 *-1
  void array_header(std::size_t count);    // *n
  void map_header(std::size_t pairs);      // %n / *2n
  void set_header(std::size_t count);      // ~n / *n
  void push_header(std::size_t count);     // >n / *n
  void dbl(double value);                  // ,v / $ bulk
  void boolean(bool value);                // #t / :1
  void verbatim(std::string_view format3, std::string_view text);  // =n fmt:text / $ bulk
  void ok() { simple("OK"); }

  // Writes a whole value tree (a kError value's str is the full "CODE msg").
  void value(const Value& v);

 private:
  void line(char type, std::string_view text);
  void length_header(char type, std::size_t n);

  std::string& out_;
  Protocol protocol_;
};

// Appends one request frame: an array of bulk strings (what clients send).
void append_command(std::string& out, std::span<const std::string_view> args);
void append_command(std::string& out, std::initializer_list<std::string_view> args);

}  // namespace leasehold::resp
