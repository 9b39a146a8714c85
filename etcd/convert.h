// etcd/convert.h: INTERNAL to etcd/. Conversions between our value types
// (etcd/types.h) and the generated protobuf messages.
// Thread-safety: pure functions.
#pragma once

#include "etcd/types.h"
#include "etcd_api.pb.h"
#include "leasehold/status.h"
#include "mvcc.pb.h"

namespace leasehold::etcd::detail {

KeyValue from_proto(const mvccpb::KeyValue& kv);
RangeResult from_proto(const etcdserverpb::RangeResponse& response);
TxnResult from_proto(const etcdserverpb::TxnResponse& response);

void to_proto(std::string_view key, std::string_view range_end, const RangeOptions& options,
              etcdserverpb::RangeRequest* out);
void to_proto(const Compare& compare, etcdserverpb::Compare* out);
void to_proto(const TxnOp& op, etcdserverpb::RequestOp* out);

// Client-side checks: non-empty key within kMaxKeyBytes, value within
// kMaxValueBytes. kInvalidArgument / kLimitExceeded naming the problem.
Status check_key(std::string_view key);
Status check_value(std::string_view value);
Status check_txn(const std::vector<Compare>& compares, const std::vector<TxnOp>& success,
                 const std::vector<TxnOp>& failure);

}  // namespace leasehold::etcd::detail
