// common/child_exec.cc: see the header.
#include "common/child_exec.h"

#include <signal.h>
#include <sys/wait.h>

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

}  // namespace leasehold::proc
