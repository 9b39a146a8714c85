#include "resp/writer.h"

#include <fmt/format.h>

#include <cmath>

namespace leasehold::resp {

void Writer::line(char type, std::string_view text) {
  out_.push_back(type);
  const std::size_t start = out_.size();
  out_.append(text);
  for (std::size_t i = start; i < out_.size(); ++i) {
    if (out_[i] == '\r' || out_[i] == '\n') out_[i] = ' ';
  }
  out_.append("\r\n");
}

void Writer::length_header(char type, std::size_t n) {
  out_.push_back(type);
  fmt::format_to(std::back_inserter(out_), "{}\r\n", n);
}

void Writer::simple(std::string_view text) { line('+', text); }
void Writer::error(std::string_view text) { line('-', text); }

void Writer::integer(std::int64_t value) {
  fmt::format_to(std::back_inserter(out_), ":{}\r\n", value);
}

void Writer::bulk(std::string_view bytes) {
  length_header('$', bytes.size());
  out_.append(bytes);
  out_.append("\r\n");
}

void Writer::null() { out_.append(resp3() ? "_\r\n" : "$-1\r\n"); }
void Writer::null_array() { out_.append(resp3() ? "_\r\n" : "*-1\r\n"); }
void Writer::array_header(std::size_t count) { length_header('*', count); }
void Writer::map_header(std::size_t pairs) {
  if (resp3()) {
    length_header('%', pairs);
  } else {
    length_header('*', pairs * 2);
  }
}
void Writer::set_header(std::size_t count) { length_header(resp3() ? '~' : '*', count); }
void Writer::push_header(std::size_t count) { length_header(resp3() ? '>' : '*', count); }

void Writer::dbl(double value) {
  std::string text;
  if (std::isinf(value)) {
    text = value > 0 ? "inf" : "-inf";
  } else if (std::isnan(value)) {
    text = "nan";
  } else {
    text = fmt::format("{}", value);
  }
  if (resp3()) {
    line(',', text);
  } else {
    bulk(text);
  }
}

void Writer::boolean(bool value) {
  if (resp3()) {
    out_.append(value ? "#t\r\n" : "#f\r\n");
  } else {
    integer(value ? 1 : 0);
  }
}

void Writer::verbatim(std::string_view format3, std::string_view text) {
  if (!resp3()) {
    bulk(text);
    return;
  }
  std::string_view fmt3 = format3.size() == 3 ? format3 : std::string_view("txt");
  length_header('=', text.size() + 4);
  out_.append(fmt3);
  out_.push_back(':');
  out_.append(text);
  out_.append("\r\n");
}

void Writer::value(const Value& v) {
  switch (v.type) {
    case Type::kSimpleString: simple(v.str); return;
    case Type::kError: error(v.str); return;
    case Type::kInteger: integer(v.integer); return;
    case Type::kBulkString: bulk(v.str); return;
    case Type::kNull: null(); return;
    case Type::kDouble: dbl(v.dbl); return;
    case Type::kBoolean: boolean(v.boolean); return;
    case Type::kVerbatim: verbatim("txt", v.str); return;
    case Type::kBigNumber:
      if (resp3()) {
        line('(', v.str);
      } else {
        bulk(v.str);
      }
      return;
    case Type::kArray: array_header(v.elements.size()); break;
    case Type::kMap: map_header(v.elements.size() / 2); break;
    case Type::kSet: set_header(v.elements.size()); break;
    case Type::kPush: push_header(v.elements.size()); break;
  }
  const std::size_t n = v.type == Type::kMap ? (v.elements.size() / 2) * 2 : v.elements.size();
  for (std::size_t i = 0; i < n; ++i) value(v.elements[i]);
}

void append_command(std::string& out, std::span<const std::string_view> args) {
  fmt::format_to(std::back_inserter(out), "*{}\r\n", args.size());
  for (std::string_view a : args) {
    fmt::format_to(std::back_inserter(out), "${}\r\n", a.size());
    out.append(a);
    out.append("\r\n");
  }
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_command(out, std::span<const std::string_view>(args.begin(), args.size()));
}

}  // namespace leasehold::resp
