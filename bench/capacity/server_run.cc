#include "bench/capacity/server_run.h"

#include <signal.h>

#include <fstream>
#include <thread>

#include "common/loopback.h"

namespace leasehold::bench {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

Status ServerRun::start(Clock::time_point deadline, bool keep_port) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!keep_port || endpoint_.port == 0) {
      auto port = net::pick_free_port();
      if (!port) return port.status();
      endpoint_ = Endpoint{"127.0.0.1", *port};
    }
    demo::ChildSpec spec;
    spec.argv = {spec_.binary, "server", "--listen", endpoint_.to_string(), "--data-dir", spec_.data_dir};
    spec.argv.insert(spec.argv.end(), spec_.extra_args.begin(), spec_.extra_args.end());
    spec.output_path = spec_.log_path;
    spec.die_with_parent = true;
    auto child = demo::ChildProcess::spawn(spec);
    if (!child) return child.status();
    child_ = std::move(child.value());
    // Poll until PONG (the server answers only once recovery is done).
    while (Clock::now() < deadline && !child_.exited()) {
      auto conn = RespConnection::connect(endpoint_, std::chrono::milliseconds(1000));
      if (conn) {
        auto pong = conn->call({"PING"});
        if (pong && pong->type == resp::Type::kSimpleString && pong->str == "PONG") return Status::ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a poll interval, not a sync
    }
    if (Clock::now() >= deadline) break;
    child_.kill_now();  // exited: maybe the port was taken; try another
  }
  child_.kill_now();
  return Status(ErrorCode::kUnavailable, "leasehold server did not answer PING; see " + spec_.log_path);
}

Status ServerRun::stop(int signal, Clock::time_point deadline) {
  if (child_.pid() <= 0) return Status::ok();
  child_.signal(signal);
  auto code = child_.wait_exit(deadline);
  if (!code) {
    child_.kill_now();
    return code.status();
  }
  return Status::ok();
}

std::uint64_t ServerRun::rss_bytes() const {
  std::ifstream status("/proc/" + std::to_string(child_.pid()) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  123 kB"
  }
  return 0;
}

std::optional<std::int64_t> ServerRun::info_field(const std::string& key, std::chrono::milliseconds io_timeout) const {
  auto value = info_number(key, io_timeout);
  if (!value) return std::nullopt;
  return static_cast<std::int64_t>(*value);
}

std::optional<double> ServerRun::info_number(const std::string& key, std::chrono::milliseconds io_timeout) const {
  auto conn = RespConnection::connect(endpoint_, io_timeout);
  if (!conn) return std::nullopt;
  auto reply = conn->call({"INFO"});
  if (!reply || reply->is_error()) return std::nullopt;
  const std::string padded = "\n" + reply->str;  // every field starts a line
  const std::string needle = "\n" + key + ":";
  auto at = padded.find(needle);
  if (at == std::string::npos) return std::nullopt;
  try {
    return std::stod(padded.substr(at + needle.size()));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace leasehold::bench
