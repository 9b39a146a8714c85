// testkit/subprocess.h: spawning and controlling real processes in tests.
//
// Subprocess owns a child started with fork/exec. Its destructor sends
// SIGKILL to the child and to its process group (also when stopped) and
// reaps it, so a failing test never leaves processes behind. Every child
// also gets SIGKILL when the test process dies, however it dies (a crash,
// ctest's timeout kill): the parent-death signal, with every fork done on
// one thread that lives as long as the process, so any thread may spawn.
// Output goes to files (or is inherited).
//
// Errors: spawn() returns kIoError when fork/exec fails (exec failure is
// reported through a CLOEXEC pipe, so a missing binary is an error, not a
// child that exits 127).
// Thread-safety: one owner per object; spawn() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"

namespace leasehold::testing {

struct SpawnOptions {
  std::vector<std::pair<std::string, std::string>> env;  // added to the parent's
  std::string cwd;          // empty: the parent's
  std::string stdout_path;  // empty: inherit
  std::string stderr_path;  // empty: inherit
  bool new_process_group = true;  // so signal_group() reaches grandchildren
};

class Subprocess {
 public:
  static Result<Subprocess> spawn(const std::vector<std::string>& argv,
                                  const SpawnOptions& options = {});
  Subprocess() = default;
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // True until the child has exited (and been reaped by wait/running).
  bool running();
  void signal(int sig) const;        // to the child
  void signal_group(int sig) const;  // to its process group
  // Waits up to scaled(timeout) (testkit/eventually.h) for exit.
  // Returns the exit code (or 128+signal), nullopt if still running then.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  // SIGKILL and reap.
  void kill9();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> status_;
  bool group_ = false;
};

}  // namespace leasehold::testing
