#include "demo/private_services.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace leasehold::demo {
namespace {

constexpr int kStartAttempts = 5;

std::string log_tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (s.size() > 1500) s = "..." + s.substr(s.size() - 1500);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "(empty log)" : s;
}

bool mentions_port_in_use(const std::string& log) {
  return log.find("ddress already in use") != std::string::npos ||
         log.find("could not bind") != std::string::npos ||
         log.find("could not create any TCP/IP sockets") != std::string::npos;
}

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

// ---------------------------------------------------------------- leasehold

Result<std::unique_ptr<PrivateLeaseholdServer>> PrivateLeaseholdServer::start(
    const std::string& leasehold_binary, const std::vector<std::pair<std::string, std::string>>& env) {
  std::unique_ptr<PrivateLeaseholdServer> server(new PrivateLeaseholdServer());
  auto dir = ScratchDir::create("leasehold-demo-server");
  if (!dir) return dir.status();
  server->dir_ = std::move(*dir);
  server->data_dir_ = server->dir_.path() + "/data";
  const std::string log = server->dir_.path() + "/server.log";
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    auto port = pick_free_port();
    if (!port) return port.status();
    ChildSpec spec;
    spec.argv = {leasehold_binary, "server", "--listen", "127.0.0.1:" + std::to_string(*port),
                 "--data-dir", server->data_dir_, "--log-level", "warn"};
    spec.output_path = log;
    spec.die_with_parent = true;
    spec.env = env;
    auto child = ChildProcess::spawn(spec);
    if (!child) return child.status();
    const auto deadline = SteadyClock::now() + std::chrono::seconds(15);
    bool up = false;
    while (!up && !child->exited() && SteadyClock::now() < deadline) {
      up = wait_until_accepting(*port, std::chrono::milliseconds(100));
    }
    if (up) {
      server->process_ = std::move(*child);
      server->port_ = *port;
      return server;
    }
    child->kill_now();
    const std::string tail = log_tail(log);
    if (!mentions_port_in_use(tail) || attempt == kStartAttempts) {
      return Status(ErrorCode::kUnavailable, "the private leasehold server did not start: " + tail);
    }
  }
  return Status(ErrorCode::kUnavailable, "the private leasehold server did not start");
}

PrivateLeaseholdServer::~PrivateLeaseholdServer() {
  process_.signal(SIGTERM);
  if (!process_.wait_exit(SteadyClock::now() + std::chrono::seconds(5))) process_.kill_now();
}

// --------------------------------------------------------------- PostgreSQL

bool PrivatePostgres::installed(const std::string& bin_dir) {
  return executable(bin_dir + "/initdb") && executable(bin_dir + "/pg_ctl") &&
         executable(bin_dir + "/postgres");
}

Result<int> PrivatePostgres::pg_tool(const std::vector<std::string>& args, const std::string& log,
                                     std::chrono::milliseconds timeout) const {
  ChildSpec spec;
  spec.argv = args;
  spec.argv[0] = bin_dir_ + "/" + args[0];
  spec.output_path = log;
  spec.run_as = run_as_;
  spec.cwd = dir_.path();  // readable by the postgres user (our cwd may not be)
  return run_to_completion(spec, timeout);
}

Result<std::unique_ptr<PrivatePostgres>> PrivatePostgres::start(const std::string& bin_dir) {
  if (!installed(bin_dir)) {
    return Status(ErrorCode::kUnavailable, "PostgreSQL is not installed in " + bin_dir +
                                               " (initdb, pg_ctl, postgres)");
  }
  std::unique_ptr<PrivatePostgres> pg(new PrivatePostgres());
  pg->bin_dir_ = bin_dir;
  if (::geteuid() == 0) {
    const passwd* user = ::getpwnam("postgres");
    if (user == nullptr) {
      return Status(ErrorCode::kUnavailable,
                    "PostgreSQL refuses to run as root and there is no 'postgres' user to run it as");
    }
    pg->run_as_ = std::make_pair(user->pw_uid, user->pw_gid);
  }
  auto dir = ScratchDir::create("leasehold-demo-pg");
  if (!dir) return dir.status();
  pg->dir_ = std::move(*dir);
  const std::string& path = pg->dir_.path();
  if (pg->run_as_ && ::chown(path.c_str(), pg->run_as_->first, pg->run_as_->second) != 0) {
    return Status(ErrorCode::kIoError, "chown " + path + " to postgres failed");
  }
  ::chmod(path.c_str(), 0700);

  const std::string data = path + "/data";
  const std::string initdb_log = path + "/initdb.log";
  auto init = pg->pg_tool({"initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                           "--no-sync"},
                          initdb_log, std::chrono::seconds(60));
  if (!init) return init.status();
  if (*init != 0) {
    return Status(ErrorCode::kUnavailable, "initdb failed: " + log_tail(initdb_log));
  }
  const std::string ctl_log = path + "/pg_ctl.log";
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    // One server log per attempt, so a retry reads only its own failure.
    const std::string server_log = path + "/postgres-" + std::to_string(attempt) + ".log";
    auto port = pick_free_port();
    if (!port) return port.status();
    const std::string options = "-p " + std::to_string(*port) + " -k " + path +
                                " -c listen_addresses=127.0.0.1 -c fsync=off"
                                " -c synchronous_commit=off -c full_page_writes=off"
                                " -c max_connections=30";
    auto started = pg->pg_tool({"pg_ctl", "-D", data, "-l", server_log, "-w", "-t", "30", "-o",
                                options, "start"},
                               ctl_log, std::chrono::seconds(40));
    if (!started) return started.status();
    if (*started == 0) {
      pg->port_ = *port;
      pg->running_ = true;
      return pg;
    }
    const std::string tail = log_tail(server_log);
    if (!mentions_port_in_use(tail) || attempt == kStartAttempts) {
      return Status(ErrorCode::kUnavailable, "PostgreSQL did not start: " + tail + " / " + log_tail(ctl_log));
    }
  }
  return Status(ErrorCode::kUnavailable, "PostgreSQL did not start");
}

PrivatePostgres::~PrivatePostgres() {
  if (running_) {
    const std::string data = dir_.path() + "/data";
    const std::string log = dir_.path() + "/pg_ctl.log";
    auto fast = pg_tool({"pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "20", "stop"}, log,
                        std::chrono::seconds(25));
    if (!fast || *fast != 0) {
      (void)pg_tool({"pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "10", "stop"}, log,
                    std::chrono::seconds(15));
    }
  }
  dir_.remove_now();
}

std::string PrivatePostgres::conninfo() const {
  return "host=127.0.0.1 port=" + std::to_string(port_) +
         " user=postgres dbname=postgres connect_timeout=5 sslmode=disable gssencmode=disable";
}

}  // namespace leasehold::demo
