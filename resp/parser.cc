#include "resp/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace leasehold::resp {
namespace {

constexpr std::size_t kMaxHeaderLine = 32;  // "$" + digits + slack

enum class LineStatus : std::uint8_t { kFound, kNeedMore, kTooLong };

// Finds the CRLF-terminated line starting at `pos` (the type byte excluded by
// the caller via `skip`). `line` is the text between, `next` the position after CRLF.
LineStatus find_line(std::string_view in, std::size_t pos, std::size_t max_len,
                     std::string_view& line, std::size_t& next) {
  const std::size_t limit = max_len + 2;
  const std::size_t avail = in.size() - pos;
  const std::size_t scan = avail < limit ? avail : limit;
  const void* cr = std::memchr(in.data() + pos, '\r', scan);
  while (cr != nullptr) {
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(cr) - in.data());
    if (at + 1 >= in.size()) return LineStatus::kNeedMore;
    if (in[at + 1] == '\n') {
      line = in.substr(pos, at - pos);
      next = at + 2;
      return LineStatus::kFound;
    }
    const std::size_t rest = pos + scan - (at + 1);
    cr = std::memchr(in.data() + at + 1, '\r', rest);
  }
  return avail >= limit ? LineStatus::kTooLong : LineStatus::kNeedMore;
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

bool parse_double(std::string_view text, double& out) {
  if (text.empty() || text.size() > 64) return false;
  if (text == "inf" || text == "+inf") {
    out = __builtin_inf();
    return true;
  }
  if (text == "-inf") {
    out = -__builtin_inf();
    return true;
  }
  if (text == "nan") {
    out = __builtin_nan("");
    return true;
  }
  const std::string copy(text);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

bool is_aggregate_byte(char c) { return c == '*' || c == '%' || c == '~' || c == '>'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

bool split_inline(std::string_view line, std::vector<std::string>& args) {
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && is_space(line[i])) ++i;
    if (i >= n) return true;
    std::string current;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;
        const char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && hex_digit(line[i + 2]) >= 0 &&
            hex_digit(line[i + 3]) >= 0) {
          current.push_back(static_cast<char>(hex_digit(line[i + 2]) * 16 + hex_digit(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          switch (e) {
            case 'n': current.push_back('\n'); break;
            case 'r': current.push_back('\r'); break;
            case 't': current.push_back('\t'); break;
            case 'b': current.push_back('\b'); break;
            case 'a': current.push_back('\a'); break;
            default: current.push_back(e); break;
          }
          i += 2;
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !is_space(line[i + 1])) return false;
          ++i;
          done = true;
        } else {
          current.push_back(c);
          ++i;
        }
      } else if (in_single) {
        if (i >= n) return false;
        const char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          current.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < n && !is_space(line[i + 1])) return false;
          ++i;
          done = true;
        } else {
          current.push_back(c);
          ++i;
        }
      } else {
        if (i >= n || is_space(line[i])) {
          done = true;
        } else if (line[i] == '"' && current.empty()) {
          in_double = true;
          ++i;
        } else if (line[i] == '\'' && current.empty()) {
          in_single = true;
          ++i;
        } else {
          current.push_back(line[i]);
          ++i;
        }
      }
    }
    args.push_back(std::move(current));
  }
}

Parser::Parser(Mode mode, ParserLimits limits) : mode_(mode), limits_(limits) {}

Parser::Step Parser::fail(std::string message) {
  error_ = std::move(message);
  stack_.clear();
  frame_cost_ = 0;
  return Step::kError;
}

bool Parser::charge(std::size_t bytes) {
  frame_cost_ += bytes;
  return frame_cost_ <= limits_.max_frame_bytes;
}

void Parser::reserve_elements(Partial& partial) {
  // One allocation for a typical command instead of one per doubling; at
  // most kReserveElements up front, so a declared count the bytes never
  // follow costs no more than a small frame.
  partial.aggregate.elements.reserve(std::min(partial.remaining, kReserveElements));
}

bool Parser::deliver(Value& item) {
  while (!stack_.empty()) {
    Partial& top = stack_.back();
    top.aggregate.elements.push_back(std::move(item));
    if (--top.remaining > 0) return false;
    item = std::move(top.aggregate);
    stack_.pop_back();
  }
  return true;
}

ParseOutcome Parser::parse(std::string_view in) {
  ParseOutcome outcome;
  if (!error_.empty()) {
    outcome.status = ParseStatus::kError;
    outcome.error = error_;
    return outcome;
  }
  std::size_t pos = 0;
  while (pos < in.size()) {
    Value item;
    Step step;
    if (mode_ == Mode::kRequest && stack_.empty()) {
      step = in[pos] == '*' ? parse_request_header(in, pos, item) : parse_inline(in, pos, item);
    } else {
      step = parse_item(in, pos, item);
    }
    if (step == Step::kError) {
      outcome.status = ParseStatus::kError;
      outcome.error = error_;
      outcome.consumed = pos;
      return outcome;
    }
    if (step == Step::kNeedMore) break;
    if (step == Step::kSkipped) continue;
    if (deliver(item)) {
      frame_cost_ = 0;
      outcome.status = ParseStatus::kValue;
      outcome.value = std::move(item);
      outcome.consumed = pos;
      return outcome;
    }
  }
  outcome.consumed = pos;
  return outcome;
}

Parser::Step Parser::parse_inline(std::string_view in, std::size_t& pos, Value& out) {
  const std::size_t avail = in.size() - pos;
  const std::size_t scan = avail < limits_.max_inline_bytes + 1 ? avail : limits_.max_inline_bytes + 1;
  const void* nl = std::memchr(in.data() + pos, '\n', scan);
  if (nl == nullptr) {
    if (avail > limits_.max_inline_bytes) return fail("Protocol error: too big inline request");
    return Step::kNeedMore;
  }
  const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - in.data());
  std::string_view line = in.substr(pos, at - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> args;
  if (!split_inline(line, args)) return fail("Protocol error: unbalanced quotes in request");
  pos = at + 1;
  if (args.empty()) return Step::kSkipped;
  out.type = Type::kArray;
  out.elements.reserve(args.size());  // bounded by the line length
  for (auto& a : args) out.elements.push_back(Value::bulk(std::move(a)));
  return Step::kItem;
}

Parser::Step Parser::parse_request_header(std::string_view in, std::size_t& pos, Value& out) {
  std::string_view line;
  std::size_t next = 0;
  switch (find_line(in, pos + 1, kMaxHeaderLine, line, next)) {
    case LineStatus::kNeedMore: return Step::kNeedMore;
    case LineStatus::kTooLong: return fail("Protocol error: too big mbulk count string");
    case LineStatus::kFound: break;
  }
  std::int64_t count = 0;
  if (!parse_int64(line, count) || count < -1) return fail("Protocol error: invalid multibulk length");
  if (count > 0 && static_cast<std::uint64_t>(count) > limits_.max_array_len) {
    return fail("Protocol error: too big array count");
  }
  const std::size_t header_bytes = next - pos;
  pos = next;
  if (count <= 0) return Step::kSkipped;  // Redis ignores empty and null requests
  if (!charge(header_bytes + sizeof(Value))) return fail("Protocol error: too big frame");
  Partial partial;
  partial.aggregate.type = Type::kArray;
  partial.remaining = static_cast<std::size_t>(count);
  reserve_elements(partial);
  stack_.push_back(std::move(partial));
  out = Value{};
  return Step::kSkipped;
}

Parser::Step Parser::parse_item(std::string_view in, std::size_t& pos, Value& out) {
  const char type = in[pos];
  if (mode_ == Mode::kRequest && type != '$') {
    const unsigned char c = static_cast<unsigned char>(type);
    return fail(c >= 0x20 && c < 0x7f ? fmt::format("Protocol error: expected '$', got '{}'", type)
                                       : fmt::format("Protocol error: expected '$', got 0x{:02x}", c));
  }
  const bool lengthed = type == '$' || type == '=' || type == '!' || is_aggregate_byte(type);
  const std::size_t max_line = lengthed ? kMaxHeaderLine : limits_.max_bulk_bytes;
  std::string_view line;
  std::size_t next = 0;
  switch (find_line(in, pos + 1, max_line, line, next)) {
    case LineStatus::kNeedMore: return Step::kNeedMore;
    case LineStatus::kTooLong:
      if (type == '$') return fail("Protocol error: too big bulk count string");
      if (lengthed) return fail("Protocol error: too big count string");
      return fail("Protocol error: line too long");
    case LineStatus::kFound: break;
  }

  switch (type) {
    case '+':
    case '-':
      out.type = type == '+' ? Type::kSimpleString : Type::kError;
      out.str.assign(line);
      break;
    case ':':
      if (!parse_int64(line, out.integer)) return fail("Protocol error: invalid integer");
      out.type = Type::kInteger;
      break;
    case ',':
      if (!parse_double(line, out.dbl)) return fail("Protocol error: invalid double");
      out.type = Type::kDouble;
      out.str.assign(line);
      break;
    case '#':
      if (line != "t" && line != "f") return fail("Protocol error: invalid boolean");
      out.type = Type::kBoolean;
      out.boolean = line == "t";
      break;
    case '(': {
      std::size_t digits = (!line.empty() && (line[0] == '-' || line[0] == '+')) ? 1 : 0;
      if (digits == line.size()) return fail("Protocol error: invalid big number");
      for (std::size_t i = digits; i < line.size(); ++i) {
        if (line[i] < '0' || line[i] > '9') return fail("Protocol error: invalid big number");
      }
      out.type = Type::kBigNumber;
      out.str.assign(line);
      break;
    }
    case '_':
      if (!line.empty()) return fail("Protocol error: invalid null");
      out.type = Type::kNull;
      break;
    case '$':
    case '=':
    case '!': {
      std::int64_t len = 0;
      if (!parse_int64(line, len) || len < -1 || (len == -1 && type != '$')) {
        return fail("Protocol error: invalid bulk length");
      }
      if (len == -1) {
        if (mode_ == Mode::kRequest) return fail("Protocol error: invalid bulk length");
        out.type = Type::kNull;
        break;
      }
      const auto size = static_cast<std::uint64_t>(len);
      if (size > limits_.max_bulk_bytes) return fail("Protocol error: too big bulk count");
      if (frame_cost_ + (next - pos) + size + 2 + sizeof(Value) > limits_.max_frame_bytes) {
        return fail("Protocol error: too big frame");
      }
      if (in.size() - next < size + 2) return Step::kNeedMore;  // payload not here yet
      if (in[next + size] != '\r' || in[next + size + 1] != '\n') {
        return fail("Protocol error: bulk not terminated by CRLF");
      }
      std::string_view payload = in.substr(next, size);
      if (type == '=') {
        if (payload.size() < 4 || payload[3] != ':') return fail("Protocol error: invalid verbatim string");
        payload.remove_prefix(4);
        out.type = Type::kVerbatim;
      } else {
        out.type = type == '$' ? Type::kBulkString : Type::kError;
      }
      out.str.assign(payload);
      next += size + 2;
      break;
    }
    case '*':
    case '%':
    case '~':
    case '>': {
      std::int64_t count = 0;
      if (!parse_int64(line, count) || count < -1 || (count == -1 && type != '*')) {
        return fail("Protocol error: invalid multibulk length");
      }
      if (count == -1) {
        out.type = Type::kNull;
        break;
      }
      if (static_cast<std::uint64_t>(count) > limits_.max_array_len) {
        return fail("Protocol error: too big array count");
      }
      out.type = type == '*' ? Type::kArray : type == '%' ? Type::kMap : type == '~' ? Type::kSet : Type::kPush;
      if (count == 0) break;
      if (stack_.size() >= limits_.max_depth) return fail("Protocol error: too deep nesting");
      if (!charge((next - pos) + sizeof(Value))) return fail("Protocol error: too big frame");
      Partial partial;
      partial.aggregate.type = out.type;
      partial.remaining = static_cast<std::size_t>(count) * (type == '%' ? 2 : 1);
      reserve_elements(partial);
      stack_.push_back(std::move(partial));
      pos = next;
      return Step::kSkipped;
    }
    default: {
      const unsigned char c = static_cast<unsigned char>(type);
      return fail(c >= 0x20 && c < 0x7f ? fmt::format("Protocol error: unknown type byte '{}'", type)
                                         : fmt::format("Protocol error: unknown type byte 0x{:02x}", c));
    }
  }
  if (!charge((next - pos) + sizeof(Value))) return fail("Protocol error: too big frame");
  pos = next;
  return Step::kItem;
}

}  // namespace leasehold::resp
