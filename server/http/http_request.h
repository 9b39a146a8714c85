// server/http/http_request.h: a small, bounded HTTP/1.1 request parser for the
// operations listener (server/http/http_server.h). It reads the request line and
// the headers; it accepts no request body.
//
// Limits and errors (the status the listener answers with, then closes):
//   400  malformed request line, header line, target or percent-encoding;
//        a bare CR; a Content-Length that is not a number
//   413  a request body (Content-Length > 0 or any Transfer-Encoding)
//   431  request line + headers over max_header_bytes, or over max_headers
//   505  a version other than HTTP/1.0 or HTTP/1.1
// The method is not judged here (405 is the router's: only GET and HEAD).
//
// Thread-safety: a parser belongs to one connection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace leasehold::server {

struct HttpLimits {
  std::size_t max_header_bytes = 16 * 1024;  // request line + headers, CRLFs included
  std::size_t max_headers = 64;
};

struct HttpRequest {
  std::string method;   // as sent, e.g. "GET"
  std::string target;   // as sent, e.g. "/api/locks/a%2Fb?count=5"
  std::string path;     // percent-decoded path, e.g. "/api/locks/a/b"
  std::string raw_path; // the path before decoding (segments stay distinguishable)
  std::vector<std::pair<std::string, std::string>> query;  // decoded
  std::string version;  // "HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased

  // The first query value named `name`, or nullopt.
  std::optional<std::string> query_value(std::string_view name) const;
  // The first header named `name` (lower case), or nullopt.
  std::optional<std::string> header(std::string_view name) const;
};

class HttpRequestParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  explicit HttpRequestParser(HttpLimits limits = {}) : limits_(limits) {}

  // Feeds received bytes. kDone: request() is complete (bytes after it are
  // ignored); kError: error_status() / error_message() say why. Once done or
  // failed, later calls return the same state.
  State feed(std::string_view bytes);

  const HttpRequest& request() const { return request_; }
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

 private:
  State fail(int status, std::string message);
  State parse_head();

  HttpLimits limits_;
  std::string buffer_;
  State state_ = State::kNeedMore;
  HttpRequest request_;
  int error_status_ = 0;
  std::string error_message_;
};

// Decodes %XX escapes (and, when `plus_is_space`, '+'); nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);
// Encodes every byte outside [A-Za-z0-9-._~] as %XX.
std::string percent_encode(std::string_view text);

}  // namespace leasehold::server
