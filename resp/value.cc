#include "resp/value.h"

#include <fmt/format.h>

namespace leasehold::resp {

std::string_view type_name(Type type) {
  switch (type) {
    case Type::kSimpleString: return "simple-string";
    case Type::kError: return "error";
    case Type::kInteger: return "integer";
    case Type::kBulkString: return "bulk-string";
    case Type::kNull: return "null";
    case Type::kArray: return "array";
    case Type::kMap: return "map";
    case Type::kSet: return "set";
    case Type::kPush: return "push";
    case Type::kDouble: return "double";
    case Type::kBoolean: return "boolean";
    case Type::kVerbatim: return "verbatim";
    case Type::kBigNumber: return "big-number";
  }
  return "unknown";
}

const Value* Value::find(std::string_view key) const {
  if (type != Type::kMap) return nullptr;
  for (std::size_t i = 0; i + 1 < elements.size(); i += 2) {
    const Value& k = elements[i];
    if ((k.type == Type::kBulkString || k.type == Type::kSimpleString) && k.str == key) {
      return &elements[i + 1];
    }
  }
  return nullptr;
}

std::string Value::debug_string() const {
  switch (type) {
    case Type::kSimpleString: return str;
    case Type::kError: return "(error) " + str;
    case Type::kInteger: return fmt::format("(integer) {}", integer);
    case Type::kBulkString: return fmt::format("\"{}\"", str);
    case Type::kNull: return "(nil)";
    case Type::kDouble: return fmt::format("(double) {}", str);
    case Type::kBoolean: return boolean ? "(true)" : "(false)";
    case Type::kVerbatim: return fmt::format("\"{}\"", str);
    case Type::kBigNumber: return fmt::format("(big number) {}", str);
    case Type::kArray:
    case Type::kMap:
    case Type::kSet:
    case Type::kPush: {
      std::string out(type == Type::kMap ? "{" : type == Type::kPush ? ">[" : "[");
      for (std::size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out += (type == Type::kMap && i % 2 == 1) ? ": " : ", ";
        out += elements[i].debug_string();
      }
      out += type == Type::kMap ? "}" : "]";
      return out;
    }
  }
  return "?";
}

}  // namespace leasehold::resp
