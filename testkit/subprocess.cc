#include "testkit/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "common/child_exec.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {


void redirect(const std::string& path, int fd) {
  if (path.empty()) return;
  int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out >= 0) {
    ::dup2(out, fd);
    ::close(out);
  }
}

// PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not
// the process. So every child is forked by this one thread, which lives as
// long as the process: children die with the test process (also on SIGKILL
// or a crash), never with a short-lived thread that happened to start them.
// Jobs run one at a time, in order; callers block until theirs has run.
// Leaked on purpose (no destructor races a detached thread at exit). A
// fork()ed copy of the process has no such thread: it gets its own.
class ForkingThread {
 public:
  static ForkingThread& of_this_process() {
    static std::mutex mu;
    static ForkingThread* current = nullptr;
    std::lock_guard lock(mu);
    if (current == nullptr || current->owner_ != ::getpid()) current = new ForkingThread();
    return *current;
  }

  void run(const std::function<void()>& job) {
    std::packaged_task<void()> task(job);
    auto done = task.get_future();
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(task));
    }
    cv_.notify_one();
    done.get();
  }

 private:
  ForkingThread() : owner_(::getpid()) {
    std::thread([this] { loop(); }).detach();
  }

  [[noreturn]] void loop() {
    while (true) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !jobs_.empty(); });
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
    }
  }

  const pid_t owner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> jobs_;
};

}  // namespace

Result<Subprocess> Subprocess::spawn(const std::vector<std::string>& argv,
                                     const SpawnOptions& options) {
  if (argv.empty()) return Status(ErrorCode::kInvalidArgument, "spawn: empty argv");
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    return Status(ErrorCode::kIoError, std::string("pipe2: ") + std::strerror(errno));
  }
  const proc::ExecPlan plan = proc::plan_exec(argv, options.env);

  const pid_t parent = ::getpid();
  pid_t pid = -1;
  int fork_errno = 0;
  ForkingThread::of_this_process().run([&] {
    pid = ::fork();
    fork_errno = errno;
    if (pid != 0) return;
    // The child: only async-signal-safe steps until exec (or _exit).
    ::close(pipefd[0]);
    if (options.new_process_group) ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    proc::reset_signals_in_child({SIGPIPE});
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) {
      int e = errno;
      [[maybe_unused]] auto n = ::write(pipefd[1], &e, sizeof e);
      ::_exit(127);
    }
    redirect(options.stdout_path, STDOUT_FILENO);
    redirect(options.stderr_path, STDERR_FILENO);
    ::execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
    int e = errno;
    [[maybe_unused]] auto n = ::write(pipefd[1], &e, sizeof e);
    ::_exit(127);
  });
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    return Status(ErrorCode::kIoError, std::string("fork: ") + std::strerror(fork_errno));
  }
  ::close(pipefd[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(pipefd[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(pipefd[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return Status(ErrorCode::kIoError,
                  "exec " + argv[0] + ": " + std::strerror(child_errno));
  }
  Subprocess child(pid);
  child.group_ = options.new_process_group;
  return child;
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      status_(std::exchange(other.status_, std::nullopt)),
      group_(other.group_) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    kill9();
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
    group_ = other.group_;
  }
  return *this;
}

Subprocess::~Subprocess() {
  // Grandchildren (e.g. a command run under `leasehold lock`) share the group.
  if (pid_ > 0 && group_) ::kill(-pid_, SIGKILL);
  kill9();
}

bool Subprocess::running() {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = proc::exit_code_of(st, -1);
    return false;
  }
  return r == 0;
}

void Subprocess::signal(int sig) const {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

void Subprocess::signal_group(int sig) const {
  if (pid_ > 0 && !status_) ::kill(-pid_, sig);
}

std::optional<int> Subprocess::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  if (!eventually([this] { return !running(); }, timeout, std::chrono::milliseconds(5))) return std::nullopt;
  return status_;
}

void Subprocess::kill9() {
  if (pid_ <= 0 || status_) return;
  ::kill(pid_, SIGKILL);
  ::kill(pid_, SIGCONT);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = proc::exit_code_of(st, -1);
}

}  // namespace leasehold::testing
