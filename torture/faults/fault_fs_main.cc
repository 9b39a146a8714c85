// torture/faults/fault_fs_main.cc: `leasehold-fault-fs BACKING MOUNT CONTROL`
// (fault_fs.h): mounts, serves until SIGTERM/SIGINT/SIGHUP, unmounts; a
// power cut at each SIGUSR1.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "torture/faults/fault_fs_mounts.h"
#include "torture/faults/fault_fs_ops.h"

namespace {

using namespace leasehold::torture::fault_fs;

int usage(const char* why) {
  std::fprintf(stderr, "%s: %s\nusage: leasehold-fault-fs BACKING MOUNT CONTROL (docs/faults.md)\n", kFsName, why);
  return 2;
}

int serve(Context& context, const std::string& mount) {
  const std::string options = std::string("allow_other,default_permissions,auto_unmount,fsname=") + kFsName +
                              ",subtype=" + kFsName;
  std::vector<std::string> words = {kFsName, "-o", options};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse* fs = fuse_new(&args, operations(), sizeof(fuse_operations), &context);
  if (fs == nullptr) {
    std::fprintf(stderr, "%s: fuse_new failed\n", kFsName);
    return 1;
  }
  // The handlers first: a SIGTERM right after the mount appears must still
  // end the loop and unmount (it sets the session's exit flag).
  fuse_session* session = fuse_get_session(fs);
  int rc = 1;
  if (fuse_set_signal_handlers(session) != 0) {
    std::fprintf(stderr, "%s: cannot set signal handlers\n", kFsName);
  } else {
    if (fuse_mount(fs, mount.c_str()) != 0) {
      std::fprintf(stderr, "%s: cannot mount %s\n", kFsName, mount.c_str());
    } else {
      std::fprintf(stderr, "%s: mounted %s\n", kFsName, mount.c_str());
      fuse_loop_config* loop = fuse_loop_cfg_create();
      fuse_loop_cfg_set_max_threads(loop, 16);
      const int loop_rc = fuse_loop_mt(fs, loop);  // 0 unmounted, > 0 the signal, < 0 -errno
      rc = loop_rc >= 0 ? 0 : 1;
      fuse_loop_cfg_destroy(loop);
      fuse_unmount(fs);
    }
    fuse_remove_signal_handlers(session);
  }
  fuse_destroy(fs);
  fuse_opt_free_args(&args);
  return rc;
}

// Waits for SIGUSR1 (blocked in every thread) and cuts the power each
// time: the journal's cut, then a line appended to `report`.
void start_power_cut_thread(Journal& journal, const std::string& report) {
  std::thread([&journal, report] {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (;;) {
      int sig = 0;
      if (sigwait(&usr1, &sig) != 0) continue;
      const CutReport r = journal.cut();
      std::ofstream(report, std::ios::app) << "cut files " << r.files << " bytes " << r.dropped << " errors "
                                           << r.errors << "\n";
    }
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return usage("three arguments wanted");
  std::error_code ec;
  const std::string backing = std::filesystem::absolute(argv[1], ec).lexically_normal().string();
  std::string mount = std::filesystem::absolute(argv[2], ec).lexically_normal().string();
  if (mount.size() > 1 && mount.back() == '/') mount.pop_back();
  const int fd = ::open(backing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return usage("BACKING is not a directory");
  // A daemon of an earlier run that died leaves a mount whose every use
  // fails with ENOTCONN: detach it so this one can take its place.
  if (!unmount_lazily(mount)) {
    std::fprintf(stderr, "%s: %s is mounted and could not be unmounted\n", kFsName, mount.c_str());
    return 1;
  }
  ControlFile control(argv[3]);
  (void)control.current();  // report unknown words now
  static Journal journal;  // static: the power cut thread outlives main()
  // SIGUSR1 blocked before libfuse starts its threads, so only the power
  // cut thread takes it.
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  start_power_cut_thread(journal, std::string(argv[3]) + ".cut");
  Context context{fd, &control, &journal};
  const int rc = serve(context, mount);
  ::close(fd);
  return rc;
}
