#include "testkit/etcd_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <thread>

#include "testkit/eventually.h"
#include "testkit/http_client.h"
#include "testkit/net.h"

namespace leasehold::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string etcd_binary() {
  const char* override_path = std::getenv("LEASEHOLD_ETCD_BIN");
  return override_path != nullptr && *override_path != '\0' ? override_path : "/usr/bin/etcd";
}

// The body of one HTTP/1.0 exchange with etcd (it closes the connection after
// the response, which is how http_exchange finds the end), "" when it failed.
std::string body_of(const Result<HttpResult>& response) { return response ? response->body : std::string(); }

// etcd's JSON gateway prints uint64 fields as strings: "name":"123". 0 if absent.
std::uint64_t json_uint(const std::string& json, const std::string& name) {
  const std::string prefix = "\"" + name + "\":\"";
  const std::size_t at = json.find(prefix);
  if (at == std::string::npos) return 0;
  return std::strtoull(json.c_str() + at + prefix.size(), nullptr, 10);
}

}  // namespace

EtcdCluster::EtcdCluster(const EtcdClusterOptions& options) : options_(options), dir_("etcd") {}

Result<std::unique_ptr<EtcdCluster>> EtcdCluster::start(const EtcdClusterOptions& options) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    std::vector<std::string> data_dirs;
    auto started = start_once(options, data_dirs);  // a failed attempt's members are dead when it returns
    if (started.is_ok() || attempt == kAttempts ||
        started.status().message().find("address already in use") == std::string::npos) {
      return started;
    }
    // A routed data dir is the same directory next time: empty it (the
    // default ones were in the failed attempt's temp dir, removed with it).
    for (const std::string& dir : data_dirs) {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        std::filesystem::remove_all(entry.path(), ec);
      }
    }
  }
}

Result<std::unique_ptr<EtcdCluster>> EtcdCluster::start_once(const EtcdClusterOptions& options,
                                                             std::vector<std::string>& data_dirs) {
  if (options.members < 1 || options.members > 7) {
    return Status(ErrorCode::kInvalidArgument, "etcd test cluster needs 1..7 members");
  }
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster(options));
  cluster->token_ = "leasehold-test-" + std::to_string(::getpid()) + "-" +
                    std::to_string(Clock::now().time_since_epoch().count());
  for (int i = 0; i < options.members; ++i) {
    Member m;
    m.name = "m" + std::to_string(i);
    m.client_port = free_port();
    m.peer_port = free_port();
    m.metrics_port = options.tls ? free_port() : m.client_port;
    m.advertised_peer_port = options.peer_route ? options.peer_route(i, m.peer_port) : m.peer_port;
    if (m.client_port == 0 || m.peer_port == 0 || m.metrics_port == 0) {
      return Status(ErrorCode::kIoError, "etcd test cluster: no free port");
    }
    if (m.advertised_peer_port == 0) return Status(ErrorCode::kIoError, "etcd test cluster: no peer route");
    const std::string default_dir = cluster->dir_.file(m.name + ".data");
    m.data_dir = options.data_dir_route ? options.data_dir_route(i, default_dir) : default_dir;
    if (m.data_dir.empty()) return Status(ErrorCode::kIoError, "etcd test cluster: no data dir for member " + m.name);
    data_dirs.push_back(m.data_dir);
    cluster->members_.push_back(std::move(m));
  }
  for (int i = 0; i < options.members; ++i) {
    if (Status s = cluster->spawn(i); !s) return s;
  }
  if (Status s = cluster->wait_healthy(options.start_timeout); !s) return s;
  return cluster;
}

EtcdCluster::~EtcdCluster() {
  for (Member& m : members_) m.process.kill9();
}

std::string EtcdCluster::endpoint(int i) const {
  return (options_.tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(client_port(i));
}

std::string EtcdCluster::endpoints() const {
  std::string out;
  for (int i = 0; i < size(); ++i) {
    if (i > 0) out += ',';
    out += endpoint(i);
  }
  return out;
}

std::uint16_t EtcdCluster::client_port(int i) const {
  return members_.at(static_cast<std::size_t>(i)).client_port;
}

std::string EtcdCluster::log_path(int i) const {
  return dir_.file(members_.at(static_cast<std::size_t>(i)).name + ".log");
}

std::vector<std::string> EtcdCluster::argv(int i) const {
  const Member& m = members_.at(static_cast<std::size_t>(i));
  std::string initial_cluster;
  for (const Member& peer : members_) {
    if (!initial_cluster.empty()) initial_cluster += ',';
    initial_cluster += peer.name + "=http://127.0.0.1:" + std::to_string(peer.advertised_peer_port);
  }
  const std::string client_url = endpoint(i);
  const std::string peer_url = "http://127.0.0.1:" + std::to_string(m.peer_port);
  const std::string advertised_peer_url = "http://127.0.0.1:" + std::to_string(m.advertised_peer_port);
  std::vector<std::string> args;
  const std::vector<std::string> etcd_args = {
      etcd_binary(),
      "--name", m.name,
      "--data-dir", m.data_dir,
      "--listen-client-urls", client_url,
      "--advertise-client-urls", client_url,
      "--listen-peer-urls", peer_url,
      "--initial-advertise-peer-urls", advertised_peer_url,
      "--initial-cluster", initial_cluster,
      "--initial-cluster-state", "new",
      "--initial-cluster-token", token_,
      "--heartbeat-interval", std::to_string(options_.heartbeat_interval.count()),
      "--election-timeout", std::to_string(options_.election_timeout.count()),
  };
  args.insert(args.end(), etcd_args.begin(), etcd_args.end());
  if (options_.tls) {
    const EtcdTlsFiles& t = *options_.tls;
    args.insert(args.end(), {"--cert-file", t.cert_file, "--key-file", t.key_file, "--trusted-ca-file", t.ca_file,
                             "--client-cert-auth", "--listen-metrics-urls",
                             "http://127.0.0.1:" + std::to_string(m.metrics_port)});
  }
  return args;
}

Status EtcdCluster::spawn(int i) {
  SpawnOptions spawn_options;
  spawn_options.stdout_path = log_path(i);
  spawn_options.stderr_path = log_path(i);
  auto process = Subprocess::spawn(argv(i), spawn_options);
  if (!process) return process.status();
  members_.at(static_cast<std::size_t>(i)).process = std::move(*process);
  return Status::ok();
}

pid_t EtcdCluster::pid(int i) const { return members_.at(static_cast<std::size_t>(i)).process.pid(); }

bool EtcdCluster::running(int i) { return members_.at(static_cast<std::size_t>(i)).process.running(); }

void EtcdCluster::kill(int i) { members_.at(static_cast<std::size_t>(i)).process.kill9(); }

void EtcdCluster::pause(int i) { members_.at(static_cast<std::size_t>(i)).process.signal(SIGSTOP); }

void EtcdCluster::resume(int i) { members_.at(static_cast<std::size_t>(i)).process.signal(SIGCONT); }

Status EtcdCluster::restart(int i) {
  kill(i);
  if (Status s = spawn(i); !s) return s;
  if (!wait_for_port(client_port(i), options_.start_timeout)) {
    return Status(ErrorCode::kUnavailable,
                  "etcd member " + std::to_string(i) + " did not listen after restart; log tail:\n" + log_tail(i));
  }
  return Status::ok();
}

namespace {

// Polls /health on `metrics_port` until it says healthy (true), alive()
// turns false or `deadline` passes (false).
bool healthy_until(std::uint16_t metrics_port, const std::function<bool()>& alive, const ScaledDeadline& deadline) {
  bool ok = false;
  eventually([&] {
    ok = body_of(http_exchange(metrics_port, "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", std::chrono::seconds(1)))
             .find("\"health\":\"true\"") != std::string::npos;
    return ok || !alive() || deadline.passed();
  }, deadline.left(), std::chrono::milliseconds(50));
  return ok;
}

}  // namespace

bool EtcdCluster::healthy(int i, std::chrono::milliseconds timeout) {
  return healthy_until(members_.at(static_cast<std::size_t>(i)).metrics_port, [&] { return running(i); },
                       ScaledDeadline(timeout));
}

Status EtcdCluster::wait_healthy(std::chrono::milliseconds timeout) {
  const ScaledDeadline deadline(timeout);
  for (int i = 0; i < size(); ++i) {
    if (!running(i)) continue;
    if (!healthy_until(members_.at(static_cast<std::size_t>(i)).metrics_port, [&] { return running(i); }, deadline)) {
      return Status(ErrorCode::kUnavailable, "etcd member " + std::to_string(i) + " not healthy in time" +
                                                 (running(i) ? "" : " (exited)") + "; log tail:\n" + log_tail(i));
    }
  }
  return Status::ok();
}

int EtcdCluster::leader(std::chrono::milliseconds timeout, int skip) {
  int found = -1;
  eventually(
      [&] {
        for (int i = 0; i < size(); ++i) {
          if (i == skip || !running(i)) continue;
          // The maintenance Status API through etcd's JSON gateway.
          const std::string status = body_of(http_exchange(
              client_port(i),
              "POST /v3/maintenance/status HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              "Content-Length: 2\r\n\r\n{}",
              std::chrono::seconds(1)));
          const std::uint64_t self = json_uint(status, "member_id");
          if (self != 0 && json_uint(status, "leader") == self) {
            found = i;
            return true;
          }
        }
        return false;
      },
      timeout, std::chrono::milliseconds(50));
  return found;
}

Result<std::string> EtcdCluster::etcdctl(const std::vector<std::string>& args, const std::string& user_password,
                                         const std::vector<int>& members) {
  std::string targets = members.empty() ? endpoints() : "";
  for (int m : members) targets += (targets.empty() ? "" : ",") + endpoint(m);
  std::vector<std::string> argv = {"/usr/bin/etcdctl", "--endpoints", targets, "--dial-timeout", "10s",
                                   "--command-timeout", "30s"};
  if (options_.tls) {
    const EtcdTlsFiles& t = *options_.tls;
    argv.insert(argv.end(), {"--cacert", t.ca_file, "--cert", t.client_cert_file, "--key", t.client_key_file});
  }
  if (!user_password.empty()) argv.insert(argv.end(), {"--user", user_password});
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions spawn_options;
  spawn_options.env = {{"ETCDCTL_API", "3"}};
  spawn_options.stdout_path = dir_.file("etcdctl.out");
  spawn_options.stderr_path = spawn_options.stdout_path;
  ::unlink(spawn_options.stdout_path.c_str());  // Subprocess appends: only this call's output
  auto process = Subprocess::spawn(argv, spawn_options);
  if (!process) return process.status();
  const std::optional<int> code = process->wait(std::chrono::seconds(60));
  const std::string out = read_file(spawn_options.stdout_path);
  std::string shown;
  for (const std::string& a : args) shown += " " + a;
  if (code != 0) {
    return Status(ErrorCode::kInternal, "etcdctl" + shown + " failed (" +
                                            (code ? "exit " + std::to_string(*code) : std::string("timeout")) +
                                            "): " + out);
  }
  return out;
}

Status EtcdCluster::enable_auth(const std::string& root_password, const std::vector<EtcdUser>& users) {
  std::vector<std::vector<std::string>> steps = {{"user", "add", "root:" + root_password},
                                                 {"user", "grant-role", "root", "root"}};
  for (const EtcdUser& u : users) {
    steps.push_back({"role", "add", u.name});
    if (!u.prefix.empty()) {
      steps.push_back({"role", "grant-permission", u.name, "--prefix=true", "readwrite", u.prefix});
    }
    steps.push_back({"user", "add", u.name + ":" + u.password});
    steps.push_back({"user", "grant-role", u.name, u.name});
  }
  steps.push_back({"auth", "enable"});
  for (const auto& step : steps) {
    auto out = etcdctl(step);
    if (!out) return out.status();
  }
  return Status::ok();
}

std::string EtcdCluster::log_tail(int i) const {
  std::string log = read_file(log_path(i));
  return log.size() > 2000 ? log.substr(log.size() - 2000) : log;
}

}  // namespace leasehold::testing
