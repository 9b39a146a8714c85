// torture/faults/fault_fs_control.cc: the control file of leasehold-fault-fs
// (fault_fs.h).
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "torture/faults/fault_fs.h"

namespace leasehold::torture::fault_fs {

int Modes::write_error() const { return eio_write ? EIO : enospc ? ENOSPC : 0; }
int Modes::fsync_error() const { return eio_fsync ? EIO : 0; }
int Modes::truncate_error() const { return eio_write ? EIO : 0; }

Modes parse_modes(std::string_view text, std::string* unknown) {
  Modes m;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) {
    if (word == "eio-write") m.eio_write = true;
    else if (word == "eio-fsync") m.eio_fsync = true;
    else if (word == "enospc") m.enospc = true;
    else if (word != "none" && unknown != nullptr) *unknown += (unknown->empty() ? "" : " ") + word;
  }
  return m;
}

Modes ControlFile::current() {
  Key key;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    key = {true, st.st_dev, st.st_ino, st.st_size,
           static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec};
  }
  std::lock_guard lock(mu_);
  if (loaded_ && key == key_) return modes_;
  std::string text;
  if (key.exists) {
    std::ifstream in(path_);
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  std::string unknown;
  modes_ = parse_modes(text, &unknown);
  if (!unknown.empty()) {
    std::fprintf(stderr, "%s: %s: unknown words ignored: %s\n", kFsName, path_.c_str(), unknown.c_str());
  }
  key_ = key;
  loaded_ = true;
  return modes_;
}

}  // namespace leasehold::torture::fault_fs
