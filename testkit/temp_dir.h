// testkit/temp_dir.h: a private directory removed with its contents
// when the object dies, and where to find the build's binaries.
// Thread-safety: one owner per object; the free functions are safe anywhere.
#pragma once

#include <string>

namespace leasehold::testing {

class TempDir {
 public:
  // Creates a fresh directory under $TMPDIR (or /tmp) named leasehold-<prefix>-XXXXXX.
  // Aborts the test program if that fails (nothing sensible can follow).
  explicit TempDir(const std::string& prefix = "test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// $LEASEHOLD_BUILD_DIR (set by CTest), else the current directory.
std::string build_dir();
// build_dir() + "/leasehold"
std::string leasehold_binary();
// Whole file contents, or "" when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace leasehold::testing
