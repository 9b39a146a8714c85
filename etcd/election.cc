#include "etcd/election.h"

namespace leasehold::etcd {

Election::Election(Client& client, std::string prefix) : client_(client), prefix_(std::move(prefix)) {}

Result<QueueKey> Election::campaign(std::int64_t lease, std::string_view value,
                                    std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  auto mine = enqueue(client_, prefix_, lease, value);
  if (!mine) return mine.status();
  mine_ = *mine;
  Status waited = wait_until_first(client_, prefix_, *mine, deadline, std::move(stop));
  if (!waited) {
    if (waited.code() == ErrorCode::kTimedOut) {
      (void)dequeue(client_, *mine);  // best effort: do not lead later without knowing
      mine_.reset();
    } else if (waited.code() == ErrorCode::kSessionExpired) {
      mine_.reset();
    }
    return waited;
  }
  return *mine;
}

Status Election::resign() {
  if (!mine_) return Status::ok();
  Status s = dequeue(client_, *mine_);
  if (s) mine_.reset();
  return s;
}

Result<std::optional<Leader>> Election::leader() {
  const std::string dir = prefix_ + "/";
  RangeOptions first;
  first.limit = 1;
  first.sort_target = SortTarget::kCreate;
  first.sort_order = SortOrder::kAscend;
  auto r = client_.range(dir, prefix_end(dir), first);
  if (!r) return r.status();
  if (r->kvs.empty()) return std::optional<Leader>();
  const KeyValue& kv = r->kvs[0];
  return std::optional<Leader>(Leader{kv.key, kv.value, kv.create_revision, kv.lease, r->revision});
}

}  // namespace leasehold::etcd
