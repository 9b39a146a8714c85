#include "bench/load/etcd_txn_client.h"

#include <thread>
#include <utility>

#include "etcd/client.h"

namespace leasehold::bench {
namespace {

class EtcdTxnClient final : public LockClient {
 public:
  EtcdTxnClient(std::unique_ptr<etcd::Client> client, std::string prefix, int index,
                std::chrono::milliseconds io_timeout)
      : client_(std::move(client)),
        fence_key_(prefix + "/fence"),
        key_(prefix + "/c" + std::to_string(index)),
        io_timeout_(io_timeout) {}

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
    auto r = client_->txn({etcd::Compare::create_revision(fence_key_, etcd::Compare::Op::kEqual, 0)},
                          {etcd::TxnOp::put(key_, "0123456789abcdef")}, {});
    if (!r) return r.status();
    if (!r->succeeded) return Status(ErrorCode::kInternal, "txn compare on " + fence_key_ + " failed");
    mark_granted();  // no lock: the "acquire latency" is one fenced write
    return true;
  }

  Status finish() override {
    auto r = client_->delete_range(key_);
    return r ? Status::ok() : r.status();
  }

 private:
  std::unique_ptr<etcd::Client> client_;
  std::string fence_key_;
  std::string key_;
  std::chrono::milliseconds io_timeout_;
};

}  // namespace

Result<std::unique_ptr<LockClient>> make_etcd_txn_client(const std::string& endpoints, std::string prefix,
                                                        int index, std::chrono::milliseconds io_timeout) {
  etcd::ClientOptions options;
  options.endpoints = endpoints;
  options.call_timeout = io_timeout;
  auto client = etcd::Client::create(options);
  if (!client) return client.status();
  return std::unique_ptr<LockClient>(std::make_unique<EtcdTxnClient>(std::move(client).value(), std::move(prefix), index, io_timeout));
}

}  // namespace leasehold::bench
