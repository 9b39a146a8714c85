// fuzz/resp_parser_fuzzer.cc: libFuzzer target for the incremental RESP
// parser (resp/parser.h), in request and reply mode.
//
// Input: byte 0 picks the mode (bit 0), tight limits (bit 1) and the chunking
// pattern (bits 2..7); the rest is the byte stream. The stream is parsed once
// whole and once fed in small chunks; both must give the same values and the
// same final status (incremental parsing must not depend on how TCP split the
// bytes). Also checked: `consumed` never exceeds the input, an error is
// sticky, a request is a non-empty array of bulk strings, and a request
// re-encoded with append_command() parses back to the same arguments.
// Any broken check aborts (a crash for libFuzzer).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "resp/parser.h"
#include "resp/writer.h"

namespace {

using leasehold::resp::ParseOutcome;
using leasehold::resp::Parser;
using leasehold::resp::ParserLimits;
using leasehold::resp::ParseStatus;
using leasehold::resp::Type;
using leasehold::resp::Value;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Run {
  std::vector<Value> values;
  ParseStatus last = ParseStatus::kNeedMore;
  std::string error;
};

// Parses everything buffered; returns false once the parser failed.
bool drain(Parser& parser, std::string& buffer, Run& run) {
  for (;;) {
    ParseOutcome o = parser.parse(buffer);
    check(o.consumed <= buffer.size());
    buffer.erase(0, o.consumed);
    run.last = o.status;
    if (o.status == ParseStatus::kError) {
      check(o.error.rfind("Protocol error: ", 0) == 0);
      run.error = o.error;
      ParseOutcome again = parser.parse(buffer);
      check(again.status == ParseStatus::kError && parser.failed());
      return false;
    }
    if (o.status == ParseStatus::kNeedMore) return true;
    run.values.push_back(std::move(o.value));
  }
}

Run parse_whole(Parser::Mode mode, const ParserLimits& limits, std::string_view stream) {
  Parser parser(mode, limits);
  std::string buffer(stream);
  Run run;
  drain(parser, buffer, run);
  return run;
}

Run parse_chunked(Parser::Mode mode, const ParserLimits& limits, std::string_view stream, std::uint32_t pattern) {
  Parser parser(mode, limits);
  std::string buffer;
  Run run;
  std::size_t fed = 0;
  std::uint32_t state = pattern * 2654435761U + 1;
  while (fed < stream.size()) {
    state = state * 1103515245U + 12345U;
    const std::size_t chunk = 1 + (state >> 16) % 17;
    const std::size_t n = chunk < stream.size() - fed ? chunk : stream.size() - fed;
    buffer.append(stream.substr(fed, n));
    fed += n;
    if (!drain(parser, buffer, run)) break;
  }
  return run;
}

// Re-parsed with the default limits: an inline command is bounded by
// max_inline_bytes alone, so its multi-bulk form may exceed tight limits.
void check_request(const Value& v) {
  check(v.type == Type::kArray && !v.elements.empty());
  std::vector<std::string_view> args;
  for (const Value& e : v.elements) {
    check(e.type == Type::kBulkString);
    args.push_back(e.str);
  }
  std::string frame;
  leasehold::resp::append_command(frame, args);
  Parser again(Parser::Mode::kRequest);
  ParseOutcome o = again.parse(frame);
  check(o.status == ParseStatus::kValue && o.consumed == frame.size() && o.value == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Parser::Mode mode = (control & 1U) != 0 ? Parser::Mode::kReply : Parser::Mode::kRequest;
  ParserLimits limits;
  if ((control & 2U) != 0) {
    limits.max_bulk_bytes = 16;
    limits.max_array_len = 8;
    limits.max_inline_bytes = 32;
    limits.max_depth = 3;
    limits.max_frame_bytes = 512;
  }
  const Run whole = parse_whole(mode, limits, stream);
  const Run chunked = parse_chunked(mode, limits, stream, control >> 2);
  // Doubles keep NaN, which never compares equal: compare shapes via debug_string.
  check(whole.values.size() == chunked.values.size());
  for (std::size_t i = 0; i < whole.values.size(); ++i) {
    check(whole.values[i].debug_string() == chunked.values[i].debug_string());
  }
  check(whole.last == chunked.last);
  check(whole.error == chunked.error);
  if (mode == Parser::Mode::kRequest) {
    for (const Value& v : whole.values) check_request(v);
  }
  return 0;
}
