// POWER CUT model: real processes (sh, coreutils sync and mv, and
// leasehold_test_file_ops for in-place writes) write files under the
// disk-fault shim, then leasehold-power-cut drops what a power loss would:
// bytes after the last fsync, files whose directory was never fsynced after
// their creation, renames no directory fsync covered (the replaced file
// comes back), and overwrites of fsynced bytes not fsynced since (the old
// bytes come back). Also: the control file's EIO reaches them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/torture_faults/fault_fixtures.h"

namespace leasehold::testing {
namespace {

constexpr int kKilled = 128 + 9;  // Subprocess::wait's code for SIGKILL

class PowerCutTest : public ::testing::Test {
 protected:
  // Runs `script` with sh in the shimmed directory; its exit code.
  int run(const std::string& script) { return run_shimmed({"/bin/sh", "-c", script}); }
  // Runs leasehold_test_file_ops with `ops` (file_ops.cc) in the shimmed
  // directory; its exit code (kKilled after its `kill`).
  int run_ops(const std::vector<std::string>& ops) {
    std::vector<std::string> argv = {LEASEHOLD_TEST_FILE_OPS};
    argv.insert(argv.end(), ops.begin(), ops.end());
    return run_shimmed(argv);
  }
  int run_shimmed(const std::vector<std::string>& argv) {
    SpawnOptions opts;
    opts.cwd = data_;
    opts.env = {{"LD_PRELOAD", LEASEHOLD_DISK_FAULT_SHIM},
                {torture::disk_fault::kDirEnv, data_},
                {torture::disk_fault::kControlEnv, dir_.file("control")},
                {torture::disk_fault::kJournalEnv, journal_}};
    opts.stderr_path = dir_.file("sh.stderr");
    auto p = Subprocess::spawn(argv, opts);
    if (!p) return -1;
    return p->wait(std::chrono::seconds(60)).value_or(-1);
  }
  // Creates "f" holding 0123456789, fsynced, its directory too.
  void make_synced_file() {
    ASSERT_EQ(run_ops({"open", "f", "write", "0123456789", "fsync", "syncdir", "."}), 0)
        << read_file(dir_.file("sh.stderr"));
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

TEST_F(PowerCutTest, AnOnlyPrefixLimitsTheFaultsToTheFilesBelowIt) {
  std::filesystem::create_directories(data_ + "/sub");
  std::ofstream(dir_.file("control")) << "eio-write eio-fsync only:sub/\n";
  EXPECT_NE(run_ops({"open", "sub/a", "write", "x"}), 0);  // under the prefix: refused
  EXPECT_NE(read_file(dir_.file("sh.stderr")).find("Input/output error"), std::string::npos);
  EXPECT_EQ(run_ops({"open", "b", "write", "x", "fdatasync"}), 0) << read_file(dir_.file("sh.stderr"));
  EXPECT_EQ(run_ops({"open", "subway", "write", "x", "fsync"}), 0) << read_file(dir_.file("sh.stderr"));
  std::ofstream(dir_.file("control")) << "eio-fsync only:sub/\n";
  EXPECT_NE(run_ops({"open", "sub/c", "write", "x", "fsync"}), 0);  // the write passes, the sync fails
  EXPECT_NE(read_file(dir_.file("sh.stderr")).find("fsync"), std::string::npos) << read_file(dir_.file("sh.stderr"));
}

TEST_F(PowerCutTest, AnOverwriteOfSyncedBytesIsUndone) {
  make_synced_file();
  ASSERT_EQ(run_ops({"open", "f", "pwrite", "2", "XY", "kill"}), kKilled);
  ASSERT_EQ(content("f"), "01XY456789");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "0123456789") << out;
  EXPECT_NE(out.find("overwrite undone " + data_ + "/f [2, 4)"), std::string::npos) << out;
  EXPECT_NE(out.find("bytes restored 2"), std::string::npos) << out;
}

TEST_F(PowerCutTest, AnOverwriteFollowedByFdatasyncStays) {
  make_synced_file();
  ASSERT_EQ(run_ops({"open", "f", "pwrite", "2", "XY", "fdatasync", "kill"}), kKilled);
  // The sync voided the entry, and the shim emptied its undo data file.
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    if (e.path().filename().string().starts_with("journal.undo.")) {
      EXPECT_EQ(e.file_size(), 0u) << e.path();
    }
  }
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "01XY456789") << out;
  EXPECT_EQ(out.find("overwrite undone"), std::string::npos) << out;
}

TEST_F(PowerCutTest, TwoOverwritesBetweenSyncsBringBackTheBytesOfTheLastSync) {
  make_synced_file();
  ASSERT_EQ(run_ops({"open", "f", "pwrite", "2", "XY", "fdatasync", "pwrite", "1", "abc", "pwritev", "2", "DE", "FG",
                     "kill"}),
            kKilled);
  ASSERT_EQ(content("f"), "0aDEFG6789");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "01XY456789") << out;
}

TEST_F(PowerCutTest, AnOverwriteThatExtendsTheFileIsUndoneAndCut) {
  make_synced_file();
  ASSERT_EQ(run_ops({"open", "f", "pwrite", "8", "WXYZ", "kill"}), kKilled);
  ASSERT_EQ(content("f"), "01234567WXYZ");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "0123456789") << out;
  EXPECT_NE(out.find("truncated " + data_ + "/f 12 -> 10"), std::string::npos) << out;
}

TEST_F(PowerCutTest, AWriteAfterSeekThroughAWriteOnlyFdIsUndone) {
  make_synced_file();  // by another process: this one knows f from its open
  ASSERT_EQ(run_ops({"open-wronly", "f", "seek", "3", "write", "zz", "kill"}), kKilled);
  ASSERT_EQ(content("f"), "012zz56789");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "0123456789") << out;
}

TEST_F(PowerCutTest, APreallocatedFileWrittenInPlaceKeepsWhatFdatasyncCovered) {
  // As log/entry_journal.cc makes its file: zero-filled, fsynced, renamed
  // into place, directory fsynced; then written in place through the fd
  // opened before the rename.
  ASSERT_EQ(run_ops({"open", "j.tmp", "write", "00000000", "fsync", "rename", "j.tmp", "j", "syncdir", ".",
                     "pwrite", "0", "AAAA", "fdatasync", "pwrite", "4", "BBBB", "kill"}),
            kKilled);
  ASSERT_EQ(content("j"), "AAAABBBB");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("j"), "AAAA0000") << out;
}

TEST_F(PowerCutTest, AFileARenameReplacedComesBackAsItWasSynced) {
  make_synced_file();
  // f is overwritten without a sync, then replaced by t; the rename is
  // never made durable, so f comes back, without the overwrite.
  ASSERT_EQ(run_ops({"open", "f", "pwrite", "0", "ZZ", "open", "t", "write", "new", "fsync", "rename", "t", "f",
                     "kill"}),
            kKilled);
  ASSERT_EQ(content("f"), "new");
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "0123456789") << out;
  EXPECT_FALSE(exists("t")) << out;
}

TEST_F(PowerCutTest, ATornLastJournalLineIsIgnored) {
  make_synced_file();
  // A kill in the middle of the shim's write of an undo line: the write it
  // announced never happened.
  std::ofstream(journal_, std::ios::app) << "undo\t0\t2\t" << data_ << "/f";
  std::string out;
  ASSERT_EQ(power_cut(&out), 0) << out;
  EXPECT_EQ(content("f"), "0123456789") << out;
}

}  // namespace
}  // namespace leasehold::testing
