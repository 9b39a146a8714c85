// POWER CUT model: real processes (sh, coreutils sync and mv) write files
// under the disk-fault shim, then leasehold-power-cut drops what a power
// loss would: bytes after the last fsync, files whose directory was never
// fsynced after their creation, renames no directory fsync covered (the
// replaced file comes back). Also: the control file's EIO reaches them.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

class PowerCutTest : public ::testing::Test {
 protected:
  // Runs `script` with sh in the shimmed directory; its exit code.
  int run(const std::string& script) {
    SpawnOptions opts;
    opts.cwd = data_;
    opts.env = {{"LD_PRELOAD", LEASEHOLD_DISK_FAULT_SHIM},
                {torture::disk_fault::kDirEnv, data_},
                {torture::disk_fault::kControlEnv, dir_.file("control")},
                {torture::disk_fault::kJournalEnv, journal_}};
    opts.stderr_path = dir_.file("sh.stderr");
    auto p = Subprocess::spawn({"/bin/sh", "-c", script}, opts);
    if (!p) return -1;
    return p->wait(std::chrono::seconds(60)).value_or(-1);
  }
  int power_cut(std::string* out) {
    SpawnOptions opts;
    opts.stdout_path = dir_.file("cut.out");
    auto p = Subprocess::spawn({LEASEHOLD_POWER_CUT, journal_}, opts);
    if (!p) return -1;
    const int code = p->wait(std::chrono::seconds(60)).value_or(-1);
    *out = read_file(opts.stdout_path);
    return code;
  }
  std::string content(const std::string& name) { return read_file(data_ + "/" + name); }
  bool exists(const std::string& name) { return std::filesystem::exists(data_ + "/" + name); }

  TempDir dir_;
  std::string data_ = [this] {
    std::filesystem::create_directories(dir_.file("d"));
    return dir_.file("d");
  }();
  std::string journal_ = dir_.file("journal");
};

TEST_F(PowerCutTest, DropsEverythingNotFsynced) {
  // h and f durable (data and directory fsynced), then 3 unsynced bytes on h.
  ASSERT_EQ(run("printf 12345 > h && sync h && printf old > f && sync f && sync . && printf 678 >> h"), 0);
  // t replaces f by rename, but the directory is never fsynced again.
  ASSERT_EQ(run("printf new > t && sync t && mv t f"), 0);
  // g is created and synced, its directory never.
  ASSERT_EQ(run("printf abc > g && sync g"), 0);
  ASSERT_EQ(content("f"), "new");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("h"), "12345") << out;
  EXPECT_EQ(content("f"), "old") << out;
  EXPECT_FALSE(exists("t")) << out;
  EXPECT_FALSE(exists("g")) << out;
  EXPECT_TRUE(std::filesystem::exists(journal_ + ".cut"));
}

TEST_F(PowerCutTest, ADirectoryFsyncMakesCreationsAndRenamesDurable) {
  ASSERT_EQ(run("printf old > f && sync f && sync . && printf new > t && sync t && mv t f && printf abc > g && "
                "sync g && sync ."),
            0);
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "new") << out;
  EXPECT_EQ(content("g"), "abc") << out;
}

TEST_F(PowerCutTest, ControlFileFailsFsyncWithEio) {
  std::ofstream(dir_.file("control")) << "eio-fsync\n";
  EXPECT_NE(run("printf x > a && sync a"), 0);
  EXPECT_NE(read_file(dir_.file("sh.stderr")).find("Input/output error"), std::string::npos);
  std::ofstream(dir_.file("control")) << "enospc\n";
  EXPECT_NE(run("echo x | dd of=b"), 0);
  EXPECT_NE(read_file(dir_.file("sh.stderr")).find("No space left on device"), std::string::npos);
  std::filesystem::remove(dir_.file("control"));
  EXPECT_EQ(run("printf x > c && sync c"), 0);
}

}  // namespace
}  // namespace leasehold::testing
