// resp/value.h: one RESP2/RESP3 value, as parsed from or written to the wire.
//
// A Value is a plain tree: scalars keep their payload in `str` / `integer` /
// `dbl` / `boolean`; aggregates keep their children in `elements` (a map is
// flat: key, value, key, value, ...). Null is one type for RESP2 `$-1` / `*-1`
// and RESP3 `_`.
//
// Thread-safety: plain values; safe to copy and move between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leasehold::resp {

// Which protocol a connection speaks. A connection starts in RESP2; HELLO 3
// switches it to RESP3.
enum class Protocol : std::uint8_t { kResp2 = 2, kResp3 = 3 };

enum class Type : std::uint8_t {
  kSimpleString,  // +OK
  kError,         // -ERR message   (str holds "ERR message")
  kInteger,       // :42
  kBulkString,    // $3 foo
  kNull,          // $-1, *-1, _
  kArray,         // *n
  kMap,           // %n (elements: 2n, alternating key/value)
  kSet,           // ~n
  kPush,          // >n
  kDouble,        // ,3.14         (str keeps the wire text, dbl the number)
  kBoolean,       // #t / #f
  kVerbatim,      // =n txt:...    (str holds the text after "txt:")
  kBigNumber,     // (123...       (str holds the digits)
};

std::string_view type_name(Type type);

struct Value {
  Type type = Type::kNull;
  std::string str;
  std::int64_t integer = 0;
  double dbl = 0;
  bool boolean = false;
  std::vector<Value> elements;

  static Value of(Type t, std::string s = {}) {
    Value v;
    v.type = t;
    v.str = std::move(s);
    return v;
  }
  static Value simple(std::string s) { return of(Type::kSimpleString, std::move(s)); }
  static Value error(std::string s) { return of(Type::kError, std::move(s)); }
  static Value bulk(std::string s) { return of(Type::kBulkString, std::move(s)); }
  static Value null() { return Value{}; }
  static Value integer_value(std::int64_t i) {
    Value v = of(Type::kInteger);
    v.integer = i;
    return v;
  }
  static Value array(std::vector<Value> items) {
    Value v = of(Type::kArray);
    v.elements = std::move(items);
    return v;
  }
  // `flat` alternates key, value.
  static Value map(std::vector<Value> flat) {
    Value v = of(Type::kMap);
    v.elements = std::move(flat);
    return v;
  }

  bool is_null() const { return type == Type::kNull; }
  bool is_error() const { return type == Type::kError; }
  bool is_aggregate() const {
    return type == Type::kArray || type == Type::kMap || type == Type::kSet ||
           type == Type::kPush;
  }
  // For a map: the value under a string key, or nullptr.
  const Value* find(std::string_view key) const;

  // A short human-readable rendering, for tests and logs (redis-cli style).
  std::string debug_string() const;

  friend bool operator==(const Value&, const Value&) = default;
};

}  // namespace leasehold::resp
