// server/fd_table_reserve.h in this test's own process: after the
// reservation the kernel's descriptor table (FDSize in /proc/self/status)
// holds the asked slots, no descriptor is left open, opening that many
// descriptors afterwards does not grow the table again (the growth whose
// RCU wait stalled the server's loop inside accept4()), and a soft
// RLIMIT_NOFILE below the need is raised toward the hard limit.
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

rlimit nofile() {
  rlimit limit{};
  EXPECT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  return limit;
}

std::size_t soft_limit() {
  const rlimit limit = nofile();
  return limit.rlim_cur == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(limit.rlim_cur);
}

TEST(FdTableReserve, TheTableHoldsTheAskedSlotsAndNothingIsLeftOpen) {
  const std::size_t want = std::min<std::size_t>(soft_limit(), 3000);
  const std::size_t open_before = open_descriptors();
  auto reserved = reserve_fd_table(want);
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_GE(reserved->slots, want);
  EXPECT_GE(reserved->limit, want);
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

// A shell's soft limit (often 1,024) below what --max-clients needs is
// raised up to the hard limit; the hard limit is never exceeded.
TEST(FdTableReserve, ALowSoftLimitIsRaisedUpToTheHardLimit) {
  const rlimit before = nofile();
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < 600) GTEST_SKIP() << "hard limit under 600";
  rlimit low = before;
  low.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  const std::size_t hard =
      before.rlim_max == RLIM_INFINITY ? std::size_t{1} << 20 : static_cast<std::size_t>(before.rlim_max);
  const std::size_t want = std::min<std::size_t>(hard, 2048);
  auto reserved = reserve_fd_table(want);
  const rlimit after = nofile();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);  // as it was, for the other tests
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_EQ(after.rlim_cur, want);
  EXPECT_EQ(after.rlim_max, before.rlim_max);
  EXPECT_EQ(reserved->limit, want);
  EXPECT_GE(reserved->slots, want);
}

TEST(FdTableReserve, AskingPastTheHardLimitReservesUpToIt) {
  const rlimit limit = nofile();
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= (rlim_t{1} << 20)) {
    GTEST_SKIP() << "RLIMIT_NOFILE's hard limit is too large to reserve up to";
  }
  const std::size_t hard = static_cast<std::size_t>(limit.rlim_max);
  auto reserved = reserve_fd_table(hard + 1000);
  const rlimit after = nofile();
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  ASSERT_TRUE(reserved.is_ok()) << reserved.status().to_string();
  EXPECT_EQ(reserved->limit, hard);
  EXPECT_EQ(reserved->slots, hard);
  EXPECT_EQ(after.rlim_cur, limit.rlim_max);
}

TEST(FdTableReserve, NothingAskedNothingDone) {
  auto reserved = reserve_fd_table(0);
  ASSERT_TRUE(reserved.is_ok());
  EXPECT_EQ(reserved->slots, 0u);
}

}  // namespace
}  // namespace leasehold::server
