// server/fd_table_reserve.h in this test's own process: after the
// reservation the kernel's descriptor table (FDSize in /proc/self/status)
// holds the asked slots, no descriptor is left open, and opening that many
// descriptors afterwards does not grow the table again (the growth whose
// RCU wait stalled the server's loop inside accept4()).
#include "server/fd_table_reserve.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace leasehold::server {
namespace {

std::size_t fd_table_size() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("FDSize:", 0) == 0) return std::stoul(line.substr(7));
  }
  ADD_FAILURE() << "no FDSize in /proc/self/status";
  return 0;
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

std::size_t soft_limit() {
  rlimit limit{};
  EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  return limit.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(limit.rlim_cur);
}

TEST(FdTableReserve, TheTableHoldsTheAskedSlotsAndNothingIsLeftOpen) {
  const std::size_t want = std::min<std::size_t>(soft_limit(), 3000);
  const std::size_t open_before = open_descriptors();
  auto reserved = reserve_fd_table(want);
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_GE(*reserved, want);
  EXPECT_GE(fd_table_size(), want);
  EXPECT_EQ(open_descriptors(), open_before);
}

TEST(FdTableReserve, DescriptorsOpenedAfterwardsDoNotGrowTheTable) {
  const std::size_t want = std::min<std::size_t>(soft_limit(), 1500);
  ASSERT_TRUE(reserve_fd_table(want).is_ok());
  const std::size_t table = fd_table_size();
  // Up to the reservation, less what the process already holds and a margin.
  const std::size_t room = want - std::min(want, open_descriptors() + 16);
  std::vector<int> fds;
  for (std::size_t i = 0; i < room; ++i) {
    const int fd = eventfd(0, EFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
  }
  EXPECT_EQ(fd_table_size(), table) << "opening " << room << " descriptors grew the table";
  for (int fd : fds) close(fd);
}

TEST(FdTableReserve, AskingPastTheSoftLimitReservesUpToIt) {
  const std::size_t limit = soft_limit();
  if (limit >= (std::size_t{1} << 20)) GTEST_SKIP() << "RLIMIT_NOFILE is too large to reserve up to";
  auto reserved = reserve_fd_table(limit + 1000);
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_EQ(*reserved, limit);
  EXPECT_GE(fd_table_size(), limit);
}

TEST(FdTableReserve, NothingAskedNothingDone) {
  auto reserved = reserve_fd_table(0);
  ASSERT_TRUE(reserved.is_ok());
  EXPECT_EQ(*reserved, 0u);
}

}  // namespace
}  // namespace leasehold::server
