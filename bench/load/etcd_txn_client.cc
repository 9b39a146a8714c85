#include "bench/load/etcd_txn_client.h"

#include <cstdio>
#include <thread>
#include <utility>

#include "etcd/client.h"

namespace leasehold::bench {
namespace {

class EtcdTxnClient final : public LockClient {
 public:
  EtcdTxnClient(std::unique_ptr<etcd::Client> client, std::string prefix, int index,
                std::chrono::milliseconds io_timeout, EtcdTxnShape shape)
      : client_(std::move(client)),
        fence_key_(prefix + "/fence"),
        key_(prefix + "/c" + std::to_string(index)),
        io_timeout_(io_timeout),
        shape_(shape) {}

  // The first call opens the client's connection; with many clients on a
  // loaded machine the attempt can time out before etcd answers (gRPC
  // reports UNAVAILABLE), so a read is retried within the I/O timeout,
  // before the window, like the etcd-mutex client's lease grant.
  Status setup() override {
    const Clock::time_point deadline = Clock::now() + io_timeout_;
    for (;;) {
      auto r = client_->range(fence_key_);
      if (r) return Status::ok();
      if (r.status().code() != ErrorCode::kUnavailable || Clock::now() >= deadline) return r.status();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a retry pause, not a sync
    }
  }

  Result<bool> step(Clock::time_point /*give_up*/) override {
    mark_acquire_sent();
    const auto fence = etcd::Compare::create_revision(fence_key_, etcd::Compare::Op::kEqual, 0);
    Result<etcd::TxnResult> r = Status(ErrorCode::kInternal, "no txn sent");
    if (shape_ == EtcdTxnShape::kFloor) {
      r = client_->txn({fence}, {etcd::TxnOp::put(key_, "0123456789abcdef")}, {});
    } else {
      char digits[24];
      std::snprintf(digits, sizeof digits, "%020llu", ++appended_);
      const std::string key = key_ + "/" + digits;
      r = client_->txn({fence, etcd::Compare::create_revision(key, etcd::Compare::Op::kEqual, 0)},
                       {etcd::TxnOp::put(key, std::string(kLogValueBytes, 'v'))}, {etcd::TxnOp::get(key)});
    }
    if (!r) return r.status();
    if (!r->succeeded) return Status(ErrorCode::kInternal, "txn compare under " + key_ + " failed");
    mark_granted();  // no lock: the "acquire latency" is one fenced write
    return true;
  }

  Status finish() override {
    auto r = shape_ == EtcdTxnShape::kFloor ? client_->delete_range(key_)
                                            : client_->delete_range(key_ + "/", etcd::prefix_end(key_ + "/"));
    return r ? Status::ok() : r.status();
  }

 private:
  std::unique_ptr<etcd::Client> client_;
  std::string fence_key_;
  std::string key_;
  std::chrono::milliseconds io_timeout_;
  EtcdTxnShape shape_;
  unsigned long long appended_ = 0;  // kLogAppend: the last key's number
  static constexpr std::size_t kLogValueBytes = 80;
};

}  // namespace

Result<std::unique_ptr<LockClient>> make_etcd_txn_client(const std::string& endpoints, std::string prefix,
                                                        int index, std::chrono::milliseconds io_timeout,
                                                        EtcdTxnShape shape) {
  etcd::ClientOptions options;
  options.endpoints = endpoints;
  options.call_timeout = io_timeout;
  auto client = etcd::Client::create(options);
  if (!client) return client.status();
  return std::unique_ptr<LockClient>(std::make_unique<EtcdTxnClient>(std::move(client).value(), std::move(prefix), index, io_timeout, shape));
}

}  // namespace leasehold::bench
