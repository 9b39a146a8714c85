// tests/torture/history_builder.h: hand-made torture histories for the
// checker tests (times in milliseconds, stored as ns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torture/history.h"

namespace leasehold::torture::testing {

inline Op make(std::string kind, int process, std::string key, std::int64_t inv_ms, std::int64_t cmp_ms,
               Outcome out = Outcome::kOk, std::uint64_t token = 0) {
  Op op;
  op.op = std::move(kind);
  op.process = process;
  op.key = std::move(key);
  op.inv = inv_ms * 1'000'000;
  op.cmp = cmp_ms * 1'000'000;
  op.out = out;
  op.token = token;
  return op;
}

inline Op acquire(int p, std::string key, std::int64_t inv, std::int64_t cmp, std::uint64_t token,
                  std::string mode = "exclusive", Outcome out = Outcome::kOk) {
  Op op = make("acquire", p, std::move(key), inv, cmp, out, token);
  op.mode = std::move(mode);
  return op;
}

inline Op hold(int p, std::string key, std::int64_t from, std::int64_t to, std::uint64_t token,
               std::string mode = "exclusive", std::int64_t limit = 0) {
  Op op = make("hold", p, std::move(key), from, to, Outcome::kOk, token);
  op.mode = std::move(mode);
  op.limit = limit;
  return op;
}

inline Op with_value(Op op, std::string value) {
  op.value = std::move(value);
  return op;
}

inline Op cset(int p, std::string key, std::string value, std::int64_t inv, std::int64_t cmp, Outcome out,
               std::int64_t px_ms, std::uint64_t token = 0) {
  Op op = make("cset", p, std::move(key), inv, cmp, out, token);
  op.value = std::move(value);
  op.limit = px_ms;
  return op;
}

}  // namespace leasehold::torture::testing
