#include "bench/load/etcd_mutex_client.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "etcd/client.h"
#include "etcd/keepalive.h"
#include "etcd/mutex.h"

namespace leasehold::bench {
namespace {

constexpr std::chrono::milliseconds kSetupRetryPause{100};

class EtcdMutexClient final : public LockClient {
 public:
  EtcdMutexClient(std::unique_ptr<etcd::Client> client, std::string prefix,
                  std::int64_t lease_ttl_s, std::chrono::milliseconds io_timeout)
      : client_(std::move(client)),
        prefix_(std::move(prefix)),
        lease_ttl_s_(lease_ttl_s),
        io_timeout_(io_timeout),
        mutex_(*client_, prefix_) {}

  ~EtcdMutexClient() override { (void)finish(); }
  EtcdMutexClient(const EtcdMutexClient&) = delete;
  EtcdMutexClient& operator=(const EtcdMutexClient&) = delete;

  // The first call opens the client's connection; on a loaded machine the
  // connection attempt can time out before etcd answers (gRPC reports
  // UNAVAILABLE), so the grant is retried within the I/O timeout. A grant
  // that did land unseen only leaves a lease that expires after its TTL.
  Status setup() override {
    const Clock::time_point deadline = Clock::now() + io_timeout_;
    for (;;) {
      auto grant = client_->lease_grant(lease_ttl_s_);
      if (grant) {
        lease_ = grant->id;
        break;
      }
      if (grant.status().code() != ErrorCode::kUnavailable || Clock::now() >= deadline) {
        return grant.status();
      }
      std::this_thread::sleep_for(kSetupRetryPause);
    }
    auto keepalive = etcd::LeaseKeepAlive::start(*client_, lease_, lease_ttl_s_);
    if (!keepalive) return keepalive.status();
    keepalive_ = std::move(keepalive.value());
    return Status::ok();
  }

  Result<bool> step(Clock::time_point /*give_up*/) override {
    mark_acquire_sent();
    if (Status s = mutex_.lock(lease_, Clock::now() + io_timeout_); !s) return s;
    mark_granted();
    mark_release_sent();
    if (Status s = mutex_.unlock(); !s) return s;
    return true;
  }

  Status finish() override {
    keepalive_.reset();  // stops the keepalive thread before the revoke
    if (lease_ == 0) return Status::ok();
    std::int64_t lease = std::exchange(lease_, 0);
    Status s = client_->lease_revoke(lease);
    if (!s && s.code() != ErrorCode::kNotFound) return s;
    return Status::ok();
  }

 private:
  std::unique_ptr<etcd::Client> client_;
  std::string prefix_;
  std::int64_t lease_ttl_s_;
  std::chrono::milliseconds io_timeout_;
  etcd::Mutex mutex_;  // uses *client_: declared after it
  std::int64_t lease_ = 0;
  std::unique_ptr<etcd::LeaseKeepAlive> keepalive_;
};

}  // namespace

Result<std::unique_ptr<LockClient>> make_etcd_mutex_client(const std::string& endpoints,
                                                          std::string prefix,
                                                          std::int64_t lease_ms,
                                                          std::chrono::milliseconds io_timeout) {
  etcd::ClientOptions options;
  options.endpoints = endpoints;
  options.call_timeout = io_timeout;
  auto client = etcd::Client::create(options);
  if (!client) return client.status();
  std::int64_t ttl_s = std::max<std::int64_t>(1, (lease_ms + 999) / 1000);
  return std::unique_ptr<LockClient>(std::make_unique<EtcdMutexClient>(
      std::move(client.value()), std::move(prefix), ttl_s, io_timeout));
}

}  // namespace leasehold::bench
