// torture/faults/disk_fault_shim_core.cc: the shim's state
// (disk_fault_shim_state.h): which fds are under LEASEHOLD_FAULT_DIR, the
// faults in the control file, the journal of durable facts, and what opens,
// renames and unlinks change in it (torture/faults/disk_fault_shim.h).
// Writes and syncs are in disk_fault_shim_undo.cc. One mutex guards it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "torture/faults/disk_fault_shim.h"
#include "torture/faults/disk_fault_shim_internal.h"
#include "torture/faults/disk_fault_shim_state.h"

namespace leasehold::torture::disk_fault::detail {

int close_untracked(int fd) {
  REAL(close);
  return real_close(fd);
}

namespace {

std::string resolve(int dirfd, const char* path);

}  // namespace

Shim& shim() {
  static Shim* s = [] {
    auto* x = new Shim;  // never destroyed: calls may come during exit
    const char* dir = std::getenv(kDirEnv);
    if (dir != nullptr && *dir != '\0') {
      if (char* resolved = realpath(dir, nullptr)) {
        x->dir = resolved;
        std::free(resolved);
      } else {  // not created yet (the server makes its data dir): resolve its parent
        std::string d = dir;
        while (d.size() > 1 && d.back() == '/') d.pop_back();
        x->dir = resolve(AT_FDCWD, d.c_str());
      }
      x->enabled = !x->dir.empty();
    }
    if (const char* c = std::getenv(kControlEnv)) x->control = c;
    if (const char* j = std::getenv(kJournalEnv)) x->journal = j;
    char cwd[4096];  // absolute, so the lines that name files beside it work from any directory
    if (!x->journal.empty() && x->journal[0] != '/' && getcwd(cwd, sizeof cwd) != nullptr) {
      x->journal = std::string(cwd) + "/" + x->journal;
    }
    return x;
  }();
  return *s;
}

namespace {

bool under_dir(const Shim& s, const std::string& path) {
  return path.size() >= s.dir.size() && path.compare(0, s.dir.size(), s.dir) == 0 &&
         (path.size() == s.dir.size() || path[s.dir.size()] == '/');
}

std::string fd_path(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[4096];
  const ssize_t n = readlink(link, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// An absolute, symlink-free path for `path` relative to `dirfd` (the file
// itself need not exist: its parent is resolved).
std::string resolve(int dirfd, const char* path) {
  std::string full;
  if (path[0] == '/') {
    full = path;
  } else if (dirfd == AT_FDCWD) {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == nullptr) return {};
    full = std::string(cwd) + "/" + path;
  } else {
    full = fd_path(dirfd) + "/" + path;
  }
  const std::size_t slash = full.rfind('/');
  std::string parent = slash == 0 ? "/" : full.substr(0, slash);
  char* rp = realpath(parent.c_str(), nullptr);
  if (rp == nullptr) return full;
  std::string out = std::string(rp) + (std::string(rp) == "/" ? "" : "/") + full.substr(slash + 1);
  std::free(rp);
  return out;
}

}  // namespace

const Faults& current_faults(Shim& s) {
  if (s.control.empty()) return s.faults;
  struct stat st {};
  const bool present = ::stat(s.control.c_str(), &st) == 0;
  if (present == s.control_present && (!present || (st.st_size == s.control_seen.st_size &&
                                                    st.st_mtim.tv_sec == s.control_seen.st_mtim.tv_sec &&
                                                    st.st_mtim.tv_nsec == s.control_seen.st_mtim.tv_nsec))) {
    return s.faults;
  }
  s.control_present = present;
  s.control_seen = st;
  s.faults = Faults{};
  if (!present) return s.faults;
  REAL(open);
  REAL(read);
  const int fd = real_open(s.control.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s.faults;
  char buf[1024];
  const ssize_t n = real_read(fd, buf, sizeof buf - 1);
  close_untracked(fd);
  if (n <= 0) return s.faults;
  buf[n] = '\0';
  for (char* save = nullptr, *word = strtok_r(buf, " \t\r\n", &save); word != nullptr;
       word = strtok_r(nullptr, " \t\r\n", &save)) {
    if (std::strcmp(word, "eio-write") == 0) s.faults.eio_write = true;
    if (std::strcmp(word, "eio-fsync") == 0) s.faults.eio_fsync = true;
    if (std::strcmp(word, "enospc") == 0) s.faults.enospc = true;
    if (std::strncmp(word, "only:", 5) == 0) s.faults.only = word + 5;
  }
  return s.faults;
}

bool faults_apply(const Shim& s, const Faults& faults, const std::string& path) {
  if (faults.only.empty()) return true;
  const std::size_t from = s.dir.size() + 1;  // past "<dir>/"
  return path.size() > from && path.compare(from, faults.only.size(), faults.only) == 0;
}

bool journal_line(Shim& s, const std::string& line) {
  REAL(open);
  REAL(write);
  if (s.journal.empty()) return false;
  if (s.journal_fd < 0) s.journal_fd = real_open(s.journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.journal_fd < 0) return false;
  return real_write(s.journal_fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
}

void journal(Shim& s, const char* op, unsigned long long size, const std::string& a) {
  journal_line(s, std::string(op) + "\t" + std::to_string(size) + "\t" + a + "\n");
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

// After a successful open: track the fd if it is under the directory.
static void after_open(int fd, bool created) {
  Shim& s = shim();
  if (fd < 0 || !s.enabled) return;
  std::string path = fd_path(fd);
  std::lock_guard lock(s.mu);
  s.fds.erase(fd);  // a number reused after a close the shim did not see
  if (!under_dir(s, path)) return;
  struct stat st {};
  if (fstat(fd, &st) != 0) return;
  std::shared_ptr<File> file;
  if (S_ISREG(st.st_mode)) {
    std::shared_ptr<File>& known = s.files[path];
    if (created || !known) {
      if (known) drop(s, *known);  // a file deleted behind the shim's back
      known = std::make_shared<File>();
      known->path = path;
      known->durable = created ? 0 : static_cast<unsigned long long>(st.st_size);
    }
    file = known;
    if (created) {
      journal(s, "create", 0, path);
    } else {
      journal(s, "open", static_cast<unsigned long long>(st.st_size), path);
    }
  }
  s.fds[fd] = Tracked{path, S_ISDIR(st.st_mode), file};
}

// After a successful dup of `from` onto `to`: `to` is tracked as `from` is.
void after_dup(int from, int to) {
  Shim& s = shim();
  if (to < 0 || !s.enabled) return;
  std::lock_guard lock(s.mu);
  auto it = s.fds.find(from);
  if (it == s.fds.end()) {
    s.fds.erase(to);
  } else {
    s.fds[to] = Tracked(it->second);
  }
}

static bool exists_at(int dirfd, const char* path) {
  struct stat st {};
  return fstatat(dirfd, path, &st, 0) == 0;
}

int do_openat(int dirfd, const char* path, int flags, mode_t mode, bool large) {
  REAL(openat);
  REAL(openat64);
  const bool created = (flags & O_CREAT) != 0 && shim().enabled && !exists_at(dirfd, path);
  const int fd = large ? real_openat64(dirfd, path, flags, mode) : real_openat(dirfd, path, flags, mode);
  after_open(fd, created);
  return fd;
}

// Copies `from` to a new backup file beside the journal; returns its path.
static std::string backup_copy(Shim& s, const std::string& from) {
  REAL(open);
  REAL(read);
  REAL(write);
  if (s.journal.empty()) return {};
  const std::string to = s.journal + ".prev." + std::to_string(getpid()) + "." + std::to_string(++s.backups);
  const int in = real_open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return {};
  const int out = real_open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  char buf[65536];
  ssize_t n = 0;
  while (out >= 0 && (n = real_read(in, buf, sizeof buf)) > 0) {
    if (real_write(out, buf, static_cast<std::size_t>(n)) != n) break;
  }
  close_untracked(in);
  if (out >= 0) close_untracked(out);
  return out >= 0 ? to : std::string();
}

int do_rename(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, unsigned flags) {
  REAL(renameat2);
  Shim& s = shim();
  if (!s.enabled) return real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
  const std::string from = resolve(olddirfd, oldpath);
  const std::string to = resolve(newdirfd, newpath);
  std::lock_guard lock(s.mu);
  if (!under_dir(s, to) && !under_dir(s, from)) return real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
  const std::string backup = exists_at(AT_FDCWD, to.c_str()) ? backup_copy(s, to) : std::string();
  const int rc = real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
  if (rc != 0 || from == to) return rc;
  journal_line(s, "rename\t0\t" + from + "\t" + to + "\t" + (backup.empty() ? "-" : backup) + "\n");
  if (auto it = s.files.find(to); it != s.files.end()) {
    // The replaced file's entries stay live until the rename is durable.
    File& replaced = *it->second;
    if (replaced.pending > 0) s.orphans[parent_of(to)] += replaced.pending;
    replaced.pending = 0;
    replaced.gone = true;
    s.files.erase(it);
  }
  if (auto it = s.files.find(from); it != s.files.end()) {
    std::shared_ptr<File> moved = it->second;
    s.files.erase(it);
    moved->path = to;
    s.files[to] = moved;
  }
  return rc;
}

int do_unlink(int dirfd, const char* path, int flags) {
  REAL(unlinkat);
  Shim& s = shim();
  const std::string full = s.enabled ? resolve(dirfd, path) : std::string();
  const int rc = real_unlinkat(dirfd, path, flags);
  if (rc == 0 && s.enabled && (flags & AT_REMOVEDIR) == 0) {
    std::lock_guard lock(s.mu);
    if (under_dir(s, full)) journal(s, "unlink", 0, full);
    if (auto it = s.files.find(full); it != s.files.end()) {
      drop(s, *it->second);
      s.files.erase(it);
    }
  }
  return rc;
}

bool sync_fault(int fd) {
  Shim& s = shim();
  if (!s.enabled) return false;
  std::lock_guard lock(s.mu);
  auto it = s.fds.find(fd);
  if (it == s.fds.end()) return false;
  const Faults& faults = current_faults(s);
  return faults.eio_fsync && faults_apply(s, faults, it->second.path);
}

void forget_fd(int fd) {
  Shim& s = shim();
  if (!s.enabled) return;
  std::lock_guard lock(s.mu);
  s.fds.erase(fd);
}

}  // namespace leasehold::torture::disk_fault::detail
