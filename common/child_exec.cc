// common/child_exec.cc: see the header.
#include "common/child_exec.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace leasehold::proc {

ExecPlan plan_exec(const std::vector<std::string>& argv,
                   const std::vector<std::pair<std::string, std::string>>& overrides) {
  ExecPlan plan;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool overridden = false;
    for (const auto& [key, value] : overrides) {
      overridden = overridden || (entry.size() > key.size() && entry.substr(0, key.size()) == key &&
                                  entry[key.size()] == '=');
    }
    if (!overridden) plan.env_storage.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides) plan.env_storage.push_back(key + "=" + value);
  plan.argv_storage = argv;
  for (auto& s : plan.env_storage) plan.envp.push_back(s.data());
  plan.envp.push_back(nullptr);
  for (auto& s : plan.argv_storage) plan.argv.push_back(s.data());
  plan.argv.push_back(nullptr);
  return plan;
}

void reset_signals_in_child(std::initializer_list<int> signals) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : signals) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

int exit_code_of(int wait_status, int otherwise) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return otherwise;
}

namespace {
// 0 when `path` is an executable regular file, else the errno that says why.
int executable_error(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EACCES;
  return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
}
}  // namespace

Status find_command(const std::string& command) {
  if (command.empty()) return Status(ErrorCode::kNotFound, "empty command name");
  if (command.find('/') != std::string::npos) {
    const int err = executable_error(command);
    if (err == 0) return Status::ok();
    return Status(err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIoError,
                  "cannot run '" + command + "': " + std::strerror(err));
  }
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/local/bin:/bin:/usr/bin";
  int denied = 0;
  std::size_t from = 0;
  while (from <= path.size()) {
    std::size_t to = path.find(':', from);
    if (to == std::string::npos) to = path.size();
    const std::string dir = to == from ? "." : path.substr(from, to - from);
    const int err = executable_error(dir + "/" + command);
    if (err == 0) return Status::ok();
    if (err == EACCES) denied = err;
    from = to + 1;
  }
  if (denied != 0) return Status(ErrorCode::kIoError, "cannot run '" + command + "': " + std::strerror(denied));
  return Status(ErrorCode::kNotFound, "command '" + command + "' not found in PATH");
}

}  // namespace leasehold::proc
