// Built when libzookeeper-mt-dev is not installed: the ZooKeeper baseline is
// reported as unavailable instead of failing the build.
#include "bench/load/zk_lock_client.h"

namespace leasehold::bench {

bool zookeeper_available() { return false; }

Result<std::unique_ptr<LockClient>> make_zookeeper_lock_client(const Endpoint&, std::string,
                                                               int,
                                                               std::chrono::milliseconds) {
  return Status(ErrorCode::kUnavailable,
                "leasehold_loadbench was built without libzookeeper-mt-dev");
}

}  // namespace leasehold::bench
