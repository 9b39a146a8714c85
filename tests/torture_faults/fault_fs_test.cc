// FAULT FILESYSTEM: a real `leasehold-fault-fs` mounted over a temp dir.
// Without a fault it passes everything through to the backing directory
// (both ways); each mode fails exactly its calls with its errno while reads
// keep working; clearing the control file heals at the next call; a power
// cut drops every byte not fsynced; SIGTERM
// unmounts cleanly; a daemon killed with its auto_unmount helper leaves a
// stale mount that the next start on that mount point replaces.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "testkit/eventually.h"
#include "testkit/temp_dir.h"
#include "torture/faults/fault_fs_mounts.h"
#include "torture/faults/fault_fs_process.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;
using torture::FaultFsProcess;

// errno of a call that returned -1, 0 when it succeeded.
template <typename T>
int err(T rc) {
  return rc < 0 ? errno : 0;
}

// kill -9 of the daemon and of its auto_unmount helper (fusermount3, a
// child in a session of its own): nothing unmounts, a stale mount stays.
void kill_daemon_and_helper(FaultFsProcess& fs) {
  const pid_t daemon = fs.process().pid();
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    std::getline(in, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    std::istringstream(line.substr(close + 2)) >> state >> ppid;
    if (ppid == daemon) ::kill(static_cast<pid_t>(std::stol(name)), SIGKILL);
  }
  fs.process().kill9();
}

bool stale(const std::string& mount) {
  struct stat st {};
  return ::stat(mount.c_str(), &st) != 0 && errno == ENOTCONN;
}

class FaultFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no usable /dev/fuse on this machine";
    auto fs = FaultFsProcess::start(LEASEHOLD_FAULT_FS, backing_, mount_, control_);
    ASSERT_TRUE(fs) << fs.status().to_string();
    fs_ = std::move(fs).value();
  }

  // A file on the mount, opened read-write, with `text` written and synced.
  int open_with(const std::string& name, const std::string& text) {
    const int fd = ::open((mount_ + "/" + name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    EXPECT_EQ(::fsync(fd), 0);
    return fd;
  }
  std::string read_at(int fd, std::size_t n) {
    std::string buf(n, '\0');
    const ssize_t got = ::pread(fd, buf.data(), n, 0);
    return got < 0 ? "<" + std::string(std::strerror(errno)) + ">" : buf.substr(0, static_cast<std::size_t>(got));
  }

  TempDir dir_{"fault-fs"};
  std::string backing_ = dir_.file("backing");
  std::string mount_ = dir_.file("mnt");
  std::string control_ = dir_.file("control");
  std::unique_ptr<FaultFsProcess> fs_;
};

TEST_F(FaultFsTest, PassesEverythingThroughBothWays) {
  {
    std::ofstream(mount_ + "/a.txt") << "through the mount";
  }
  EXPECT_EQ(read_file(backing_ + "/a.txt"), "through the mount");
  {
    std::ofstream(backing_ + "/b.txt") << "under it";
  }
  EXPECT_EQ(read_file(mount_ + "/b.txt"), "under it");

  ASSERT_EQ(::mkdir((mount_ + "/d").c_str(), 0700), 0);
  std::filesystem::rename(mount_ + "/a.txt", mount_ + "/d/c.txt");
  EXPECT_TRUE(std::filesystem::exists(backing_ + "/d/c.txt"));
  EXPECT_FALSE(std::filesystem::exists(backing_ + "/a.txt"));
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(mount_)) entries += e.path().filename() != "" ? 1 : 0;
  EXPECT_EQ(entries, 2);  // b.txt, d

  const int fd = open_with("e.bin", "0123456789");
  EXPECT_EQ(::fdatasync(fd), 0);
  EXPECT_EQ(::fallocate(fd, 0, 0, 4096), 0);
  EXPECT_EQ(::ftruncate(fd, 5), 0);
  EXPECT_EQ(read_at(fd, 100), "01234");
  const int dir = ::open(mount_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_EQ(::fsync(dir), 0);
  ::close(dir);
  EXPECT_EQ(::unlink((mount_ + "/e.bin").c_str()), 0);
  EXPECT_EQ(read_at(fd, 100), "01234");  // an unlinked open file still works
  ::close(fd);
  EXPECT_FALSE(std::filesystem::exists(backing_ + "/e.bin"));

  struct stat st {};
  ASSERT_EQ(::stat((mount_ + "/b.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8);
}

TEST_F(FaultFsTest, EioWriteFailsWritesFallocateAndTruncateButNotReads) {
  const int fd = open_with("f", "kept");
  ASSERT_TRUE(fs_->set_faults("eio-write"));
  EXPECT_EQ(err(::pwrite(fd, "x", 1, 0)), EIO);
  EXPECT_EQ(err(::fallocate(fd, 0, 0, 8192)), EIO);
  EXPECT_EQ(err(::ftruncate(fd, 0)), EIO);
  EXPECT_EQ(err(::truncate((mount_ + "/f").c_str(), 1)), EIO);
  EXPECT_EQ(::fsync(fd), 0);  // nothing to sync, and fsync is not broken
  EXPECT_EQ(read_at(fd, 10), "kept");
  EXPECT_EQ(read_file(backing_ + "/f"), "kept");

  ASSERT_TRUE(fs_->set_faults(""));
  EXPECT_EQ(::pwrite(fd, "K", 1, 0), 1);
  EXPECT_EQ(::fsync(fd), 0);
  EXPECT_EQ(read_file(backing_ + "/f"), "Kept");
  ::close(fd);
}

TEST_F(FaultFsTest, EioFsyncFailsFsyncAndFdatasyncOfFilesAndDirectories) {
  const int fd = open_with("g", "v1");
  ASSERT_TRUE(fs_->set_faults("eio-fsync"));
  EXPECT_EQ(::pwrite(fd, "v2", 2, 0), 2);  // writes still work
  EXPECT_EQ(err(::fsync(fd)), EIO);
  EXPECT_EQ(err(::fdatasync(fd)), EIO);
  const int dir = ::open(mount_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_EQ(err(::fsync(dir)), EIO);
  EXPECT_EQ(read_at(fd, 10), "v2");

  ASSERT_TRUE(fs_->set_faults("none"));
  EXPECT_EQ(::fsync(fd), 0);
  EXPECT_EQ(::fsync(dir), 0);
  ::close(dir);
  ::close(fd);
}

TEST_F(FaultFsTest, EnospcFailsWritesAndFallocateUntilSpaceReturns) {
  const int fd = open_with("h", "abc");
  ASSERT_TRUE(fs_->set_faults("enospc"));
  EXPECT_EQ(err(::pwrite(fd, "x", 1, 3)), ENOSPC);
  EXPECT_EQ(err(::fallocate(fd, 0, 0, 1 << 20)), ENOSPC);
  EXPECT_EQ(::fsync(fd), 0);
  EXPECT_EQ(::ftruncate(fd, 2), 0);  // shrinking needs no space
  EXPECT_EQ(read_at(fd, 10), "ab");

  ASSERT_TRUE(fs_->set_faults(""));
  EXPECT_EQ(::pwrite(fd, "c", 1, 2), 1);
  EXPECT_EQ(read_file(backing_ + "/h"), "abc");
  ::close(fd);
}

TEST_F(FaultFsTest, APowerCutDropsEveryByteNotFsyncedAndKeepsTheRest) {
  const int a = open_with("a", "durable");   // synced
  const int write_only = ::open((mount_ + "/a").c_str(), O_WRONLY | O_CLOEXEC);  // as etcd opens its WAL
  EXPECT_EQ(::pwrite(write_only, "XX", 2, 0), 2) << std::strerror(errno);  // overwritten, not synced
  ::close(write_only);
  EXPECT_EQ(::pwrite(a, "tail", 4, 7), 4);    // appended, not synced
  const int b = open_with("b", "0123456789");
  EXPECT_EQ(::ftruncate(b, 3), 0);            // shrunk, not synced
  const int c = open_with("c", "old");
  EXPECT_EQ(::pwrite(c, "new", 3, 0), 3);
  EXPECT_EQ(::fdatasync(c), 0);               // synced after the change: kept
  const int d = ::open((mount_ + "/d").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_EQ(::write(d, "never synced", 12), 12);
  for (int fd : {a, b, c, d}) ::close(fd);    // the process dies

  auto report = fs_->cut_power();
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(*report, "cut files 3 bytes " + std::to_string(2 + 4 + 7 + 12) + " errors 0");
  EXPECT_EQ(read_file(backing_ + "/a"), "durable");
  EXPECT_EQ(read_file(backing_ + "/b"), "0123456789");
  EXPECT_EQ(read_file(backing_ + "/c"), "new");
  EXPECT_TRUE(std::filesystem::exists(backing_ + "/d"));  // directory entries stay
  EXPECT_EQ(read_file(backing_ + "/d"), "");
  // Through the mount too (nothing stale in the kernel's caches).
  EXPECT_EQ(read_file(mount_ + "/a"), "durable");
  EXPECT_EQ(std::filesystem::file_size(mount_ + "/b"), 10u);
  EXPECT_EQ(read_file(mount_ + "/b"), "0123456789");

  // A second cut has nothing left to drop.
  report = fs_->cut_power();
  ASSERT_TRUE(report) << report.status().to_string();
  EXPECT_EQ(*report, "cut files 0 bytes 0 errors 0");
}

TEST_F(FaultFsTest, SigtermUnmountsCleanly) {
  fs_->process().signal(SIGTERM);
  EXPECT_EQ(fs_->process().wait(10s), 0);
  EXPECT_TRUE(eventually([&] { return !torture::fault_fs::is_mounted(fs_->mount()); }, 5s));
  std::ofstream(mount_ + "/under") << "x";  // the plain directory again
  EXPECT_FALSE(std::filesystem::exists(backing_ + "/under"));
}

TEST_F(FaultFsTest, AKilledDaemonUnmountsItselfAndAStaleMountIsReplacedAtTheNextStart) {
  // kill -9 of the daemon alone: its auto_unmount helper unmounts.
  fs_->process().signal(SIGKILL);
  EXPECT_TRUE(eventually([&] { return !torture::fault_fs::is_mounted(mount_); }, 10s));

  auto again = FaultFsProcess::start(LEASEHOLD_FAULT_FS, backing_, mount_, control_);
  ASSERT_TRUE(again) << again.status().to_string();
  kill_daemon_and_helper(**again);
  ASSERT_TRUE(stale(mount_)) << "expected a stale mount";
  auto third = FaultFsProcess::start(LEASEHOLD_FAULT_FS, backing_, mount_, dir_.file("control3"));
  ASSERT_TRUE(third) << third.status().to_string();
  std::ofstream(mount_ + "/after") << "ok";
  EXPECT_EQ(read_file(backing_ + "/after"), "ok");
}

TEST(FaultFsSweepTest, SweepUnmountsOnlyStaleFaultFsMounts) {
  if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no usable /dev/fuse on this machine";
  TempDir dir("fault-fs-sweep");
  auto live = FaultFsProcess::start(LEASEHOLD_FAULT_FS, dir.file("b1"), dir.file("m1"), dir.file("c1"));
  auto dead = FaultFsProcess::start(LEASEHOLD_FAULT_FS, dir.file("b2"), dir.file("m2"), dir.file("c2"));
  ASSERT_TRUE(live && dead);
  kill_daemon_and_helper(**dead);
  ASSERT_TRUE(stale(dir.file("m2")));
  EXPECT_GE(torture::fault_fs::sweep_stale(), 1);
  EXPECT_FALSE(torture::fault_fs::is_mounted(dir.file("m2")));
  EXPECT_TRUE(torture::fault_fs::is_mounted(dir.file("m1")));
}

}  // namespace
}  // namespace leasehold::testing
