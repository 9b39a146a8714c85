#include "etcd/convert.h"

namespace leasehold::etcd::detail {

KeyValue from_proto(const mvccpb::KeyValue& kv) {
  KeyValue out;
  out.key = kv.key();
  out.value = kv.value();
  out.create_revision = kv.create_revision();
  out.mod_revision = kv.mod_revision();
  out.version = kv.version();
  out.lease = kv.lease();
  return out;
}

RangeResult from_proto(const etcdserverpb::RangeResponse& response) {
  RangeResult out;
  out.revision = response.header().revision();
  out.more = response.more();
  out.count = response.count();
  out.kvs.reserve(static_cast<std::size_t>(response.kvs_size()));
  for (const auto& kv : response.kvs()) out.kvs.push_back(from_proto(kv));
  return out;
}

TxnResult from_proto(const etcdserverpb::TxnResponse& response) {
  TxnResult out;
  out.succeeded = response.succeeded();
  out.revision = response.header().revision();
  for (const auto& op : response.responses()) {
    switch (op.response_case()) {
      case etcdserverpb::ResponseOp::kResponseRange:
        out.responses.emplace_back(from_proto(op.response_range()));
        break;
      case etcdserverpb::ResponseOp::kResponsePut:
        out.responses.emplace_back(PutResult{op.response_put().header().revision()});
        break;
      case etcdserverpb::ResponseOp::kResponseDeleteRange:
        out.responses.emplace_back(DeleteResult{op.response_delete_range().header().revision(),
                                                op.response_delete_range().deleted()});
        break;
      default:  // a response kind we never request (nested txn)
        out.responses.emplace_back(RangeResult{});
        break;
    }
  }
  return out;
}

void to_proto(std::string_view key, std::string_view range_end, const RangeOptions& options,
              etcdserverpb::RangeRequest* out) {
  out->set_key(std::string(key));
  if (!range_end.empty()) out->set_range_end(std::string(range_end));
  out->set_limit(options.limit);
  out->set_revision(options.revision);
  out->set_sort_order(static_cast<etcdserverpb::RangeRequest::SortOrder>(options.sort_order));
  out->set_sort_target(static_cast<etcdserverpb::RangeRequest::SortTarget>(options.sort_target));
  out->set_serializable(options.serializable);
  out->set_keys_only(options.keys_only);
  out->set_count_only(options.count_only);
  out->set_min_create_revision(options.min_create_revision);
  out->set_max_create_revision(options.max_create_revision);
}

void to_proto(const Compare& compare, etcdserverpb::Compare* out) {
  out->set_key(compare.key);
  out->set_result(static_cast<etcdserverpb::Compare::CompareResult>(compare.op));
  out->set_target(static_cast<etcdserverpb::Compare::CompareTarget>(compare.target));
  switch (compare.target) {
    case Compare::Target::kVersion: out->set_version(compare.number); break;
    case Compare::Target::kCreateRevision: out->set_create_revision(compare.number); break;
    case Compare::Target::kModRevision: out->set_mod_revision(compare.number); break;
    case Compare::Target::kValue: out->set_value(compare.value); break;
    case Compare::Target::kLease: out->set_lease(compare.number); break;
  }
}

void to_proto(const TxnOp& op, etcdserverpb::RequestOp* out) {
  switch (op.kind) {
    case TxnOp::Kind::kRange:
      to_proto(op.key, op.range_end, op.range, out->mutable_request_range());
      break;
    case TxnOp::Kind::kPut: {
      auto* put = out->mutable_request_put();
      put->set_key(op.key);
      put->set_value(op.value);
      put->set_lease(op.lease);
      break;
    }
    case TxnOp::Kind::kDelete: {
      auto* del = out->mutable_request_delete_range();
      del->set_key(op.key);
      if (!op.range_end.empty()) del->set_range_end(op.range_end);
      break;
    }
  }
}

Status check_key(std::string_view key) {
  if (key.empty()) return Status(ErrorCode::kInvalidArgument, "etcd key must not be empty");
  if (key.size() > kMaxKeyBytes) {
    return Status(ErrorCode::kLimitExceeded,
                  "etcd key of " + std::to_string(key.size()) + " bytes exceeds " + std::to_string(kMaxKeyBytes));
  }
  return Status::ok();
}

Status check_value(std::string_view value) {
  if (value.size() > kMaxValueBytes) {
    return Status(ErrorCode::kLimitExceeded, "etcd value of " + std::to_string(value.size()) +
                                                 " bytes exceeds " + std::to_string(kMaxValueBytes));
  }
  return Status::ok();
}

Status check_txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                 const std::vector<TxnOp>& failure) {
  if (compares.size() > kMaxTxnOps || success.size() > kMaxTxnOps || failure.size() > kMaxTxnOps) {
    return Status(ErrorCode::kLimitExceeded,
                  "etcd txn has more than " + std::to_string(kMaxTxnOps) + " compares or ops in a branch");
  }
  for (const Compare& c : compares) {
    if (Status s = check_key(c.key); !s) return s;
  }
  for (const auto* branch : {&success, &failure}) {
    for (const TxnOp& op : *branch) {
      if (Status s = check_key(op.key); !s) return s;
      if (Status s = check_value(op.value); !s) return s;
    }
  }
  return Status::ok();
}

}  // namespace leasehold::etcd::detail
