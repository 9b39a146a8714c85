#include "etcd/types.h"

#include <utility>

namespace leasehold::etcd {

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

namespace {
Compare numeric(std::string key, Compare::Target target, Compare::Op op, std::int64_t number) {
  Compare c;
  c.key = std::move(key);
  c.target = target;
  c.op = op;
  c.number = number;
  return c;
}
}  // namespace

Compare Compare::create_revision(std::string key, Op op, std::int64_t revision) {
  return numeric(std::move(key), Target::kCreateRevision, op, revision);
}
Compare Compare::mod_revision(std::string key, Op op, std::int64_t revision) {
  return numeric(std::move(key), Target::kModRevision, op, revision);
}
Compare Compare::version(std::string key, Op op, std::int64_t version) {
  return numeric(std::move(key), Target::kVersion, op, version);
}
Compare Compare::lease(std::string key, Op op, std::int64_t lease) {
  return numeric(std::move(key), Target::kLease, op, lease);
}
Compare Compare::value_is(std::string key, Op op, std::string value) {
  Compare c;
  c.key = std::move(key);
  c.target = Target::kValue;
  c.op = op;
  c.value = std::move(value);
  return c;
}

TxnOp TxnOp::get(std::string key, std::string range_end, RangeOptions options) {
  TxnOp op;
  op.kind = Kind::kRange;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  op.range = options;
  return op;
}
TxnOp TxnOp::put(std::string key, std::string value, std::int64_t lease) {
  TxnOp op;
  op.kind = Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}
TxnOp TxnOp::del(std::string key, std::string range_end) {
  TxnOp op;
  op.kind = Kind::kDelete;
  op.key = std::move(key);
  op.range_end = std::move(range_end);
  return op;
}

}  // namespace leasehold::etcd
