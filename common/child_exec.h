// common/child_exec.h: the parts of fork/exec that every process launcher
// of the project shares (demo/child_process, `leasehold lock -- CMD`,
// tests/support/subprocess).
//
// ExecPlan: argv and the environment (the parent's, with `overrides`
// replacing or adding variables), built BEFORE fork, so that the child only
// makes async-signal-safe calls between fork and exec.
// reset_signals_in_child: in the child, the listed signals back to their
// default action and an empty signal mask (async-signal-safe).
// exit_code_of: a waitpid() status as a shell would show it (the exit code,
// or 128 + the signal), `otherwise` for anything else.
// Thread-safety: plan_exec reads `environ`; the rest has no state.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace leasehold::proc {

struct ExecPlan {
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;  // null-terminated, points into argv_storage
  std::vector<char*> envp;  // null-terminated, points into env_storage
};

ExecPlan plan_exec(const std::vector<std::string>& argv,
                   const std::vector<std::pair<std::string, std::string>>& overrides);

void reset_signals_in_child(std::initializer_list<int> signals);

int exit_code_of(int wait_status, int otherwise);

}  // namespace leasehold::proc
