// torture/faults/fault_fs_mounts.cc: see fault_fs_mounts.h.
#include "torture/faults/fault_fs_mounts.h"

#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <vector>

#include "torture/faults/fault_fs.h"

extern char** environ;

namespace leasehold::torture::fault_fs {
namespace {

struct MountEntry {
  std::string point;
  std::string fs_type;
  std::string source;
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(oct, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// Fields: id parent major:minor root point options [optional...] - type source super.
std::vector<MountEntry> mounts() {
  std::vector<MountEntry> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string w;
    while (fields >> w) f.push_back(w);
    std::size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 2 >= f.size()) continue;
    out.push_back({unescape(f[4]), f[dash + 1], unescape(f[dash + 2])});
  }
  return out;
}

bool run_fusermount_lazy(const std::string& path) {
  const char* argv[] = {"fusermount3", "-u", "-z", "-q", path.c_str(), nullptr};
  pid_t pid = -1;
  if (::posix_spawnp(&pid, "fusermount3", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

bool is_mounted(const std::string& path) {
  for (const MountEntry& m : mounts()) {
    if (m.point == path) return true;
  }
  return false;
}

bool unmount_lazily(const std::string& path) {
  if (!is_mounted(path)) return true;
  if (::geteuid() == 0) (void)::umount2(path.c_str(), MNT_DETACH);
  if (is_mounted(path)) (void)run_fusermount_lazy(path);
  return !is_mounted(path);
}

int sweep_stale() {
  int n = 0;
  for (const MountEntry& m : mounts()) {
    if (m.source != kFsName || m.fs_type.rfind("fuse", 0) != 0) continue;
    struct stat st {};
    if (::stat(m.point.c_str(), &st) == 0 || errno != ENOTCONN) continue;
    if (unmount_lazily(m.point)) ++n;
  }
  return n;
}

}  // namespace leasehold::torture::fault_fs
