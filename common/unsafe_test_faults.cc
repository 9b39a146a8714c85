#include "common/unsafe_test_faults.h"

#include <atomic>

namespace leasehold::unsafe {
namespace {

std::atomic<unsigned> g_enabled{0};  // one bit per TestFault

}  // namespace

const std::vector<std::string_view>& test_fault_names() {
  static const std::vector<std::string_view> names = {"ack-before-fsync", "expire-early", "skip-fence-check",
                                                      "reuse-token-after-restart", "grant-two-waiters",
                                                      "slow-etcd-append-reply", "hold-first-append",
                                                      "skip-quarantine"};
  return names;
}

Status enable_test_fault(std::string_view name) {
  const auto& names = test_fault_names();
  for (unsigned i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      g_enabled.fetch_or(1u << i);
      return Status::ok();
    }
  }
  std::string known;
  for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  return Status(ErrorCode::kInvalidArgument, "unknown unsafe test fault '" + std::string(name) + "' (" + known + ")");
}

bool enabled(TestFault fault) {
  return (g_enabled.load(std::memory_order_relaxed) & (1u << static_cast<unsigned>(fault))) != 0;
}

void disable_all_test_faults() { g_enabled.store(0); }

}  // namespace leasehold::unsafe
