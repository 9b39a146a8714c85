#include "common/assert.h"

#include <cstdio>
#include <cstdlib>

namespace leasehold::detail {

void assert_failed(std::string_view file, int line, std::string_view condition, std::string_view detail) noexcept {
  std::fprintf(stderr, "leasehold: invariant broken at %.*s:%d: %.*s (%.*s); stopping\n",
               static_cast<int>(file.size()), file.data(), line, static_cast<int>(condition.size()),
               condition.data(), static_cast<int>(detail.size()), detail.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace leasehold::detail
