// torture/kill_children_on_signal.h: on SIGTERM, SIGINT or SIGHUP, kill -9
// every direct child of this process (servers, cluster nodes, etcd members,
// workers) and exit 128+signal, so that a stopped harness (Ctrl-C, a ctest
// timeout's SIGTERM) leaves nothing running, and exits with the signal's
// status. (On SIGKILL of the harness every testing::Subprocess child dies of
// its parent-death signal instead.)
//
// install() blocks the three signals in the calling thread (call it in
// main() before any thread starts, so every thread inherits the mask) and
// starts a detached thread that waits for them. Subprocess resets the mask
// in its children.
// Thread-safety: call install() once.
#pragma once

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace leasehold::torture {

inline void kill_direct_children() {
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  while (dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    std::getline(stat, line);
    const auto close = line.rfind(')');  // the name may contain spaces
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == self) ::kill(pid, SIGKILL);
  }
  ::closedir(proc);
}

inline void install_kill_children_on_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    if (::sigwait(&set, &sig) != 0) return;
    std::fprintf(stderr, "leasehold-torture: signal %d: killing the run's processes\n", sig);
    kill_direct_children();
    std::_Exit(128 + sig);
  }).detach();
}

}  // namespace leasehold::torture
