// demo/private_redis.h: N throwaway redis-server processes for
// `leasehold demo redlock` (independent masters, no persistence), on free
// 127.0.0.1 ports in a /tmp scratch directory; stopped and deleted when the
// object dies.
//
// Errors: kUnavailable (redis-server missing or not coming up; the message
// carries its log tail), kIoError.
// Thread-safety: one owner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "demo/child_process.h"
#include "demo/loopback.h"
#include "leasehold/status.h"

namespace leasehold::demo {

class PrivateRedisSet {
 public:
  static Result<std::unique_ptr<PrivateRedisSet>> start(int count, const std::string& redis_server = "/usr/bin/redis-server");
  ~PrivateRedisSet();
  PrivateRedisSet(const PrivateRedisSet&) = delete;
  PrivateRedisSet& operator=(const PrivateRedisSet&) = delete;

  const std::vector<std::uint16_t>& ports() const { return ports_; }
  // "127.0.0.1:p1,127.0.0.1:p2,..."
  std::string endpoints() const;

 private:
  PrivateRedisSet() = default;
  ScratchDir dir_;
  std::vector<ChildProcess> processes_;
  std::vector<std::uint16_t> ports_;
};

}  // namespace leasehold::demo
