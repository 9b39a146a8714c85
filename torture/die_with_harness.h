// torture/die_with_harness.h: argv prefix so that a child (server, worker)
// is killed when the harness dies (e.g. a ctest timeout), as the etcd test
// cluster does: `setpriv --pdeathsig KILL --` when setpriv is installed.
// The signal fires when the *thread* that spawned the child exits, so spawn
// from the main thread (target.h). setpriv execs the command in place: the
// child's pid is the command's.
// Thread-safety: pure function.
#pragma once

#include <unistd.h>

#include <string>
#include <vector>

namespace leasehold::torture {

inline std::vector<std::string> die_with_harness(std::vector<std::string> argv) {
  if (::access("/usr/bin/setpriv", X_OK) != 0) return argv;
  std::vector<std::string> out = {"/usr/bin/setpriv", "--pdeathsig", "KILL", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace leasehold::torture
