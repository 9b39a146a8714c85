// fuzz/http_request_fuzzer.cc: libFuzzer target for the operations
// listener's HTTP/1.1 request parser (server/http/http_request.h) and its
// percent-encoding helpers: the bytes any client of --http-listen can send.
//
// Input: byte 0 picks tight limits (bit 0: 64 header bytes, 2 headers) and
// the chunking pattern (bits 1..7); the rest is the byte stream. Checked:
//  - the stream fed whole and fed in small chunks ends in the same state,
//    status, message and request (TCP may split the bytes anywhere);
//  - a finished or failed parser stays so;
//  - an error is one of 400, 413, 431, 505 with a message;
//  - a parsed request is well-formed: a token method, HTTP/1.0 or 1.1, an
//    absolute target whose decoded path is `path`, lower-case header names,
//    at most max_headers of them, no body announced;
//  - the request written back out parses to the same request;
//  - percent_encode(s) is only unreserved bytes and %XX escapes, and
//    percent_decode(percent_encode(s)) == s, for the stream itself.
// Any broken check aborts (a crash for libFuzzer).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "server/http/http_request.h"

namespace {

using leasehold::server::HttpLimits;
using leasehold::server::HttpRequest;
using leasehold::server::HttpRequestParser;

struct Outcome {
  HttpRequestParser::State state = HttpRequestParser::State::kNeedMore;
  int status = 0;
  std::string message;
  HttpRequest request;
};

Outcome finish(HttpRequestParser& parser, HttpRequestParser::State state) {
  Outcome o;
  o.state = state;
  o.status = parser.error_status();
  o.message = parser.error_message();
  if (state == HttpRequestParser::State::kDone) o.request = parser.request();
  // Sticky: more bytes change nothing once the parser has decided.
  if (state != HttpRequestParser::State::kNeedMore) FUZZ_CHECK(parser.feed("GET / HTTP/1.1\r\n\r\n") == state);
  return o;
}

Outcome parse_whole(const HttpLimits& limits, std::string_view stream) {
  HttpRequestParser parser(limits);
  return finish(parser, parser.feed(stream));
}

Outcome parse_chunked(const HttpLimits& limits, std::string_view stream, unsigned pattern) {
  HttpRequestParser parser(limits);
  HttpRequestParser::State state = parser.feed("");
  std::size_t step = 0;
  while (!stream.empty() && state == HttpRequestParser::State::kNeedMore) {
    const std::size_t n = std::min<std::size_t>(stream.size(), 1 + ((pattern >> (step++ % 7)) & 7));
    state = parser.feed(stream.substr(0, n));
    stream.remove_prefix(n);
  }
  return finish(parser, state);
}

bool same_request(const HttpRequest& a, const HttpRequest& b) {
  return a.method == b.method && a.target == b.target && a.path == b.path && a.raw_path == b.raw_path &&
         a.query == b.query && a.version == b.version && a.headers == b.headers;
}

bool is_lower_token(std::string_view s) {
  for (const char c : s) {
    if (c >= 'A' && c <= 'Z') return false;
  }
  return !s.empty();
}

void check_request(const HttpLimits& limits, const HttpRequest& r) {
  FUZZ_CHECK(!r.method.empty());
  FUZZ_CHECK(r.version == "HTTP/1.1" || r.version == "HTTP/1.0");
  FUZZ_CHECK(!r.target.empty() && r.target[0] == '/');
  FUZZ_CHECK(r.target.compare(0, r.raw_path.size(), r.raw_path) == 0);
  const auto decoded = leasehold::server::percent_decode(r.raw_path, false);
  FUZZ_CHECK(decoded.has_value() && *decoded == r.path);
  FUZZ_CHECK(r.headers.size() <= limits.max_headers);
  for (const auto& [name, value] : r.headers) {
    FUZZ_CHECK(is_lower_token(name));
    FUZZ_CHECK(value.find('\r') == std::string::npos && value.find('\n') == std::string::npos);
  }
  FUZZ_CHECK(!r.header("transfer-encoding").has_value());
  if (const auto cl = r.header("content-length")) FUZZ_CHECK(cl->find_first_not_of('0') == std::string::npos);

  // Written back out (names lower-cased, values trimmed), it parses the same.
  std::string head = r.method + " " + r.target + " " + r.version + "\r\n";
  for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
  head += "\r\n";
  HttpLimits roomy = limits;
  roomy.max_header_bytes = head.size();
  HttpRequestParser again(roomy);
  FUZZ_CHECK(again.feed(head) == HttpRequestParser::State::kDone);
  FUZZ_CHECK(same_request(again.request(), r));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned control = data[0];
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  HttpLimits limits;
  if ((control & 1) != 0) {
    limits.max_header_bytes = 64;
    limits.max_headers = 2;
  }
  const Outcome whole = parse_whole(limits, stream);
  const Outcome chunked = parse_chunked(limits, stream, control >> 1);
  FUZZ_CHECK(whole.state == chunked.state);
  FUZZ_CHECK(whole.status == chunked.status);
  FUZZ_CHECK(whole.message == chunked.message);
  if (whole.state == HttpRequestParser::State::kError) {
    FUZZ_CHECK(whole.status == 400 || whole.status == 413 || whole.status == 431 || whole.status == 505);
    FUZZ_CHECK(!whole.message.empty());
  } else {
    FUZZ_CHECK(whole.status == 0);
  }
  if (whole.state == HttpRequestParser::State::kDone) {
    FUZZ_CHECK(same_request(whole.request, chunked.request));
    check_request(limits, whole.request);
  }
  const std::string encoded = leasehold::server::percent_encode(stream);
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '%') {
      FUZZ_CHECK(i + 2 < encoded.size() && std::isxdigit(static_cast<unsigned char>(encoded[i + 1])) &&
                 std::isxdigit(static_cast<unsigned char>(encoded[i + 2])));
      i += 2;
    } else {
      FUZZ_CHECK(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~');
    }
  }
  const auto decoded = leasehold::server::percent_decode(encoded, true);
  FUZZ_CHECK(decoded.has_value() && *decoded == stream);
  return 0;
}
