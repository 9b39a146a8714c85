#include "bench/load/zk_lock_client.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

namespace leasehold::bench {
namespace {

constexpr int kPathBufferBytes = 512;
constexpr std::string_view kNodePrefix = "lock-";

Status zk_error(const char* call, int rc) {
  ErrorCode code = rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ? ErrorCode::kUnavailable
                                                                     : ErrorCode::kInternal;
  return Status(code, std::string(call) + ": " + zerror(rc));
}

void quiet_library_once() {
  static std::once_flag once;
  std::call_once(once, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR); });
}

class ZkLockClient final : public LockClient {
 public:
  ZkLockClient(std::string lock_dir, std::chrono::milliseconds io_timeout)
      : dir_(std::move(lock_dir)), io_timeout_(io_timeout) {}
  ~ZkLockClient() override { close(); }
  ZkLockClient(const ZkLockClient&) = delete;
  ZkLockClient& operator=(const ZkLockClient&) = delete;

  Status connect(const Endpoint& endpoint, int session_timeout_ms) {
    quiet_library_once();
    zh_ = zookeeper_init(endpoint.to_string().c_str(), &ZkLockClient::on_event,
                         session_timeout_ms, nullptr, this, 0);
    if (zh_ == nullptr) {
      return Status(ErrorCode::kIoError, std::string("zookeeper_init: ") + std::strerror(errno));
    }
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, io_timeout_, [this] { return connected_; })) {
      return Status(ErrorCode::kUnreachable,
                    "no ZooKeeper session with " + endpoint.to_string());
    }
    return Status::ok();
  }

  Status setup() override {
    int rc = zoo_create(zh_, dir_.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, nullptr, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) return zk_error("zoo_create(dir)", rc);
    return Status::ok();
  }

  Result<bool> step(Clock::time_point /*give_up*/) override {
    char created[kPathBufferBytes];
    std::string prefix = dir_ + "/" + std::string(kNodePrefix);
    mark_acquire_sent();
    int rc = zoo_create(zh_, prefix.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL_SEQUENTIAL, created, sizeof created);
    if (rc != ZOK) return zk_error("zoo_create", rc);
    std::string mine(created);
    if (Status s = wait_until_lowest(mine.substr(dir_.size() + 1)); !s) return s;
    mark_granted();
    mark_release_sent();
    rc = zoo_delete(zh_, mine.c_str(), -1);
    if (rc != ZOK) return zk_error("zoo_delete", rc);
    return true;
  }

  Status finish() override {
    close();
    return Status::ok();
  }

 private:
  // The recipe's loop: list the children; lowest wins; otherwise watch the
  // next-lower one and wait until it is deleted.
  Status wait_until_lowest(const std::string& mine) {
    for (;;) {
      String_vector children{};
      int rc = zoo_get_children(zh_, dir_.c_str(), 0, &children);
      if (rc != ZOK) return zk_error("zoo_get_children", rc);
      std::string predecessor;
      for (int i = 0; i < children.count; ++i) {
        std::string name(children.data[i]);
        if (name < mine && name > predecessor) predecessor = std::move(name);
      }
      deallocate_String_vector(&children);
      if (predecessor.empty()) return Status::ok();

      {
        std::lock_guard lock(mu_);
        watch_fired_ = false;
      }
      std::string path = dir_ + "/" + predecessor;
      Stat stat{};
      rc = zoo_wexists(zh_, path.c_str(), &ZkLockClient::on_watch, this, &stat);
      if (rc == ZNONODE) continue;  // already gone: list again
      if (rc != ZOK) return zk_error("zoo_wexists", rc);
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, io_timeout_, [this] { return watch_fired_; })) {
        return Status(ErrorCode::kTimedOut, "predecessor " + path + " not deleted within " +
                                                std::to_string(io_timeout_.count()) + " ms");
      }
    }
  }

  void close() {
    if (zh_ != nullptr) {
      zookeeper_close(zh_);
      zh_ = nullptr;
    }
  }

  // Session events (the global watcher passed to zookeeper_init).
  static void on_event(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* ctx) {
    auto* self = static_cast<ZkLockClient*>(ctx);
    if (type != ZOO_SESSION_EVENT) return;
    std::lock_guard lock(self->mu_);
    self->connected_ = state == ZOO_CONNECTED_STATE;
    self->cv_.notify_all();
  }

  // The one-shot watch on the predecessor znode.
  static void on_watch(zhandle_t* /*zh*/, int /*type*/, int /*state*/, const char* /*path*/,
                       void* ctx) {
    auto* self = static_cast<ZkLockClient*>(ctx);
    std::lock_guard lock(self->mu_);
    self->watch_fired_ = true;
    self->cv_.notify_all();
  }

  std::string dir_;
  std::chrono::milliseconds io_timeout_;
  zhandle_t* zh_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool connected_ = false;    // guarded by mu_
  bool watch_fired_ = false;  // guarded by mu_
};

}  // namespace

bool zookeeper_available() { return true; }

Result<std::unique_ptr<LockClient>> make_zookeeper_lock_client(
    const Endpoint& endpoint, std::string lock_dir, int session_timeout_ms,
    std::chrono::milliseconds io_timeout) {
  auto client = std::make_unique<ZkLockClient>(std::move(lock_dir), io_timeout);
  if (Status s = client->connect(endpoint, session_timeout_ms); !s) return s;
  return std::unique_ptr<LockClient>(std::move(client));
}

}  // namespace leasehold::bench
