// common/child_exec.h: the parts of fork/exec that every process launcher
// of the project shares (demo/child_process, `leasehold lock -- CMD`,
// testkit/subprocess).
//
// ExecPlan: argv and the environment (the parent's, with `overrides`
// replacing or adding variables), built BEFORE fork, so that the child only
// makes async-signal-safe calls between fork and exec.
// reset_signals_in_child: in the child, the listed signals back to their
// default action and an empty signal mask (async-signal-safe).
// exit_code_of: a waitpid() status as a shell would show it (the exit code,
// or 128 + the signal), `otherwise` for anything else.
// find_command: whether `command` can be run as execvp would find it (a
// path with a '/' as it is, else each $PATH directory): OK, kNotFound
// ("command 'x' not found in PATH" / "'./x': No such file or directory") or
// kIoError ("'x': Permission denied"). A check before starting, not a
// promise: the file may change before exec.
// Thread-safety: plan_exec reads `environ`; the rest has no state.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "leasehold/status.h"

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

Status find_command(const std::string& command);

}  // namespace leasehold::proc
