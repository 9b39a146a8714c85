// demo/private_redis.cc: see the header.
#include "demo/private_redis.h"

#include <fstream>
#include <sstream>

namespace leasehold::demo {

namespace {
std::string read_tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > 400 ? text.substr(text.size() - 400) : text;
}
}  // namespace

Result<std::unique_ptr<PrivateRedisSet>> PrivateRedisSet::start(int count, const std::string& redis_server) {
  std::unique_ptr<PrivateRedisSet> set(new PrivateRedisSet());
  auto dir = ScratchDir::create("leasehold-demo-redis");
  if (!dir) return dir.status();
  set->dir_ = std::move(*dir);
  for (int i = 0; i < count; ++i) {
    const std::string log = set->dir_.path() + "/redis" + std::to_string(i) + ".log";
    bool up = false;
    for (int attempt = 0; attempt < 3 && !up; ++attempt) {
      auto port = pick_free_port();
      if (!port) return port.status();
      ChildSpec spec;
      spec.argv = {redis_server, "--port", std::to_string(*port), "--bind", "127.0.0.1", "--save", "",
                   "--appendonly", "no", "--dir", set->dir_.path(), "--daemonize", "no"};
      spec.output_path = log;
      spec.die_with_parent = true;
      auto child = ChildProcess::spawn(spec);
      if (!child) return Status(ErrorCode::kUnavailable, "cannot run redis-server: " + child.status().message());
      const auto deadline = SteadyClock::now() + std::chrono::seconds(15);
      while (!up && !child->exited() && SteadyClock::now() < deadline) {
        up = wait_until_accepting(*port, std::chrono::milliseconds(100));
      }
      if (up) {
        set->processes_.push_back(std::move(*child));
        set->ports_.push_back(*port);
      } else {
        child->kill_now();
      }
    }
    if (!up) return Status(ErrorCode::kUnavailable, "redis-server did not start: " + read_tail(log));
  }
  return set;
}

PrivateRedisSet::~PrivateRedisSet() {
  for (auto& p : processes_) p.kill_now();
}

std::string PrivateRedisSet::endpoints() const {
  std::string out;
  for (auto port : ports_) out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  return out;
}

}  // namespace leasehold::demo
