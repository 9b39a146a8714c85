// torture/server_control.cc: see server_control.h.
#include "torture/server_control.h"

#include "testkit/eventually.h"
#include "testkit/net.h"
#include "testkit/temp_dir.h"

namespace leasehold::torture {

Status ServerControl::start() {
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {  // another process may take the free port first
    port_ = testing::free_port();
    last = spawn_and_wait();
    if (last) return last;
  }
  return last;
}

Status ServerControl::restart() {
  process_.kill9();
  // The port may still be held briefly by the dead server's socket: retry.
  Status last;
  for (int attempt = 0; attempt < 20; ++attempt) {
    last = spawn_and_wait();
    if (last) return last;
  }
  return last;
}

Status ServerControl::spawn_and_wait() {
  std::vector<std::string> argv = {testing::leasehold_binary(), "server", "--listen", testing::loopback(port_),
                                   "--data-dir", spec_.data_dir, "--log-level", "warn"};
  argv.insert(argv.end(), spec_.extra_flags.begin(), spec_.extra_flags.end());
  testing::SpawnOptions opts;
  opts.env = spec_.env;
  opts.stderr_path = spec_.stderr_path;
  auto p = testing::Subprocess::spawn(argv, opts);
  if (!p) return p.status();
  process_ = std::move(p).value();
  // Ready when it accepts connections, or give up when it exited (e.g. the
  // port was still taken).
  bool up = false;
  testing::eventually([&] {
    if (!process_.running()) return true;
    up = testing::wait_for_port(port_, std::chrono::milliseconds(100));
    return up;
  }, std::chrono::seconds(20));
  if (up && process_.running()) return {};
  process_.kill9();
  return {ErrorCode::kUnavailable, "server did not start on " + testing::loopback(port_)};
}

void ServerControl::stop() {
  process_.signal(SIGCONT);
  process_.signal(SIGTERM);
  if (!process_.wait(testing::scaled(std::chrono::seconds(10)))) process_.kill9();
}

std::string ServerControl::endpoint() const { return testing::loopback(port_); }

}  // namespace leasehold::torture
