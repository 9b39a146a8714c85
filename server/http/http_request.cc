#include "server/http/http_request.h"

#include <algorithm>
#include <charconv>

namespace leasehold::server {
namespace {

bool is_token_char(char c) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  if (c >= '0' && c <= '9') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> HttpRequest::query_value(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return std::nullopt;
}

HttpRequestParser::State HttpRequestParser::fail(int status, std::string message) {
  state_ = State::kError;
  error_status_ = status;
  error_message_ = std::move(message);
  return state_;
}

HttpRequestParser::State HttpRequestParser::feed(std::string_view bytes) {
  if (state_ != State::kNeedMore) return state_;
  // Keep at most what could still be part of the head (+3 for a CRLFCRLF that straddles the limit).
  const std::size_t room = limits_.max_header_bytes + 4 - std::min(buffer_.size(), limits_.max_header_bytes + 4);
  buffer_.append(bytes.substr(0, room));
  const std::size_t crlf = buffer_.find("\r\n\r\n");
  const std::size_t lflf = buffer_.find("\n\n");
  const std::size_t end = std::min(crlf == std::string::npos ? std::string::npos : crlf + 4,
                                   lflf == std::string::npos ? std::string::npos : lflf + 2);
  if (end == std::string::npos) {
    // Refused only once no terminator can end within the limit: deciding
    // earlier made the answer depend on how TCP split the request.
    if (buffer_.size() >= limits_.max_header_bytes + 4) return fail(431, "request headers too large");
    return state_;
  }
  if (end > limits_.max_header_bytes + 4) return fail(431, "request headers too large");
  buffer_.resize(end);
  return parse_head();
}

HttpRequestParser::State HttpRequestParser::parse_head() {
  std::vector<std::string_view> lines;
  std::string_view rest(buffer_);
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return fail(400, "bare CR in the request head");
    if (line.empty()) break;
    lines.push_back(line);
  }
  if (lines.empty()) return fail(400, "empty request");
  // Request line: METHOD SP TARGET SP VERSION
  const std::string_view rl = lines[0];
  const std::size_t sp1 = rl.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : rl.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || rl.find(' ', sp2 + 1) != std::string_view::npos) {
    return fail(400, "malformed request line");
  }
  request_.method = std::string(rl.substr(0, sp1));
  request_.target = std::string(rl.substr(sp1 + 1, sp2 - sp1 - 1));
  request_.version = std::string(rl.substr(sp2 + 1));
  if (request_.method.empty() || !std::all_of(request_.method.begin(), request_.method.end(), is_token_char)) {
    return fail(400, "malformed method");
  }
  if (request_.version.rfind("HTTP/", 0) != 0) return fail(400, "malformed HTTP version");
  if (request_.version != "HTTP/1.1" && request_.version != "HTTP/1.0") return fail(505, "HTTP version not supported");
  if (request_.target.empty() || request_.target[0] != '/') return fail(400, "the target must be an absolute path");
  for (unsigned char c : request_.target) {
    if (c <= ' ' || c >= 0x7f) return fail(400, "invalid character in the target");
  }
  const std::size_t q = request_.target.find('?');
  request_.raw_path = request_.target.substr(0, q);
  auto path = percent_decode(request_.raw_path, false);
  if (!path) return fail(400, "bad percent-encoding in the path");
  request_.path = std::move(*path);
  if (q != std::string::npos) {
    std::string_view qs = std::string_view(request_.target).substr(q + 1);
    while (!qs.empty()) {
      const std::size_t amp = qs.find('&');
      const std::string_view pair = qs.substr(0, amp);
      qs = amp == std::string_view::npos ? std::string_view() : qs.substr(amp + 1);
      if (pair.empty()) continue;
      const std::size_t eq = pair.find('=');
      auto key = percent_decode(pair.substr(0, eq), true);
      auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
      if (!key || !value) return fail(400, "bad percent-encoding in the query");
      request_.query.emplace_back(std::move(*key), std::move(*value));
    }
  }
  if (lines.size() - 1 > limits_.max_headers) return fail(431, "too many request headers");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return fail(400, "malformed header line");
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char)) return fail(400, "malformed header name");
    request_.headers.emplace_back(lower(name), std::string(trim(line.substr(colon + 1))));
  }
  if (request_.header("transfer-encoding")) return fail(413, "request bodies are not accepted");
  if (auto cl = request_.header("content-length")) {
    std::uint64_t n = 0;
    const auto [ptr, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), n);
    if (ec != std::errc() || ptr != cl->data() + cl->size() || cl->empty()) return fail(400, "bad Content-Length");
    if (n > 0) return fail(413, "request bodies are not accepted");
  }
  state_ = State::kDone;
  return state_;
}

}  // namespace leasehold::server
