// torture/history.cc: the JSON-lines form of torture/history.h.
#include "torture/history.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace leasehold::torture {
namespace {

void put_string(std::string& out, std::string_view name, std::string_view text) {
  out += '"';
  out += name;
  out += "\":\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += "\",";
}

template <typename T>
void put_number(std::string& out, std::string_view name, T value) {
  out += '"';
  out += name;
  out += "\":";
  out += std::to_string(value);
  out += ',';
}

// A tiny reader for the flat objects written above: "key":"text" or "key":int.
class FlatReader {
 public:
  explicit FlatReader(std::string_view text) : s_(text) {}

  // Calls field(name, string_value, is_string) for each member.
  template <typename Field>
  Status each(Field&& field) {
    skip_space();
    if (!eat('{')) return bad("expected {");
    skip_space();
    if (eat('}')) return {};
    for (;;) {
      skip_space();
      std::string name;
      if (Status st = read_string(name); !st) return st;
      skip_space();
      if (!eat(':')) return bad("expected :");
      skip_space();
      std::string value;
      bool is_string = false;
      if (pos_ < s_.size() && s_[pos_] == '"') {
        is_string = true;
        if (Status st = read_string(value); !st) return st;
      } else {
        const std::size_t start = pos_;
        while (pos_ < s_.size() && (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9'))) ++pos_;
        if (start == pos_) return bad("expected a value");
        value = std::string(s_.substr(start, pos_ - start));
      }
      if (Status st = field(name, value, is_string); !st) return st;
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      return bad("expected , or }");
    }
    skip_space();
    return pos_ == s_.size() ? Status() : bad("trailing bytes");
  }

 private:
  static Status bad(std::string why) { return {ErrorCode::kInvalidArgument, "history line: " + why}; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status read_string(std::string& out) {
    if (!eat('"')) return bad("expected a string");
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return {};
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      if (e == 'u') {
        if (pos_ + 4 > s_.size()) break;
        unsigned code = 0;
        const auto r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, code, 16);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_ + 4 || code > 0x7f) return bad("bad \\u escape");
        out += static_cast<char>(code);
        pos_ += 4;
      } else if (e == '"' || e == '\\' || e == '/') {
        out += e;
      } else {
        return bad("bad escape");
      }
    }
    return bad("unterminated string");
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

template <typename T>
Status parse_int(const std::string& text, T& out) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    return {ErrorCode::kInvalidArgument, "history line: bad number " + text};
  }
  return {};
}

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk: return "ok";
    case Outcome::kFail: return "fail";
    case Outcome::kUnknown: return "unknown";
  }
  return "unknown";
}

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t now_ns() { return to_ns(std::chrono::steady_clock::now()); }

std::string to_json(const Op& op) {
  std::string out = "{";
  put_string(out, "op", op.op);
  put_number(out, "p", op.process);
  put_string(out, "key", op.key);
  if (!op.mode.empty()) put_string(out, "mode", op.mode);
  if (op.limit != 0) put_number(out, "limit", op.limit);
  put_number(out, "inv", op.inv);
  put_number(out, "cmp", op.cmp);
  if (op.cmp2 != 0) put_number(out, "cmp2", op.cmp2);
  put_string(out, "out", outcome_name(op.out));
  put_number(out, "token", op.token);
  if (op.session != 0) put_number(out, "session", op.session);
  if (!op.value.empty()) put_string(out, "value", op.value);
  if (!op.aux.empty()) put_string(out, "aux", op.aux);
  out.back() = '}';
  return out;
}

Result<Op> from_json(std::string_view line) {
  Op op;
  bool has_op = false;
  Status st = FlatReader(line).each([&](const std::string& name, const std::string& v, bool is_string) -> Status {
    if (is_string) {
      if (name == "op") {
        op.op = v;
        has_op = true;
      } else if (name == "key") {
        op.key = v;
      } else if (name == "mode") {
        op.mode = v;
      } else if (name == "value") {
        op.value = v;
      } else if (name == "aux") {
        op.aux = v;
      } else if (name == "out") {
        if (v == "ok") op.out = Outcome::kOk;
        else if (v == "fail") op.out = Outcome::kFail;
        else if (v == "unknown") op.out = Outcome::kUnknown;
        else return {ErrorCode::kInvalidArgument, "history line: bad outcome " + v};
      }
      return {};  // unknown string members are ignored (forward compatible)
    }
    if (name == "p") return parse_int(v, op.process);
    if (name == "limit") return parse_int(v, op.limit);
    if (name == "inv") return parse_int(v, op.inv);
    if (name == "cmp") return parse_int(v, op.cmp);
    if (name == "cmp2") return parse_int(v, op.cmp2);
    if (name == "token") return parse_int(v, op.token);
    if (name == "session") return parse_int(v, op.session);
    return {};
  });
  if (!st) return st;
  if (!has_op) return Status(ErrorCode::kInvalidArgument, "history line: no op");
  return op;
}

Result<std::vector<Op>> read_history(const std::string& path, std::vector<std::string>* unparsable) {
  std::ifstream in(path);
  if (!in) return Status(ErrorCode::kIoError, "cannot read " + path);
  std::vector<Op> ops;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    auto op = from_json(line);
    if (op) {
      ops.push_back(std::move(op).value());
      continue;
    }
    std::string where = path + ":" + std::to_string(number) + ": " + op.status().message();
    if (unparsable == nullptr) return Status(ErrorCode::kInvalidArgument, std::move(where));
    unparsable->push_back(std::move(where));
  }
  return ops;
}

Result<std::unique_ptr<HistoryWriter>> HistoryWriter::open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return Status(ErrorCode::kIoError, "cannot open " + path);
  return std::unique_ptr<HistoryWriter>(new HistoryWriter(f));
}

HistoryWriter::~HistoryWriter() { std::fclose(file_); }

void HistoryWriter::write(const Op& op) {
  const std::string line = to_json(op) + "\n";
  std::lock_guard lock(mu_);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    // A history missing an operation that happened could hide a violation:
    // stop here; the harness does not check a run whose process failed.
    std::fprintf(stderr, "torture: history write failed: %s\n", std::strerror(errno));
    std::abort();
  }
}

}  // namespace leasehold::torture
