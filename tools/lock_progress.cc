// tools/lock_progress.cc: see the header.
#include "tools/lock_progress.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>

#include "client/cli_support.h"

namespace leasehold::tools {
namespace {

// Local wall time `age` ago, "HH:MM:SS" (display only).
std::string since(client::Millis age) {
  const auto then = std::chrono::system_clock::now() - age;
  const std::time_t t = std::chrono::system_clock::to_time_t(then);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

// Printable: control bytes and DEL become '?', so that a hostile owner
// label cannot move the cursor of the person's terminal.
std::string printable(const std::string& s, std::size_t max = 64) {
  std::string out = s.substr(0, max);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace

std::string describe_holders(const client::LockInfo& lock) {
  if (lock.holders.empty()) return "no holder now";
  const auto oldest = std::max_element(lock.holders.begin(), lock.holders.end(),
                                       [](const auto& x, const auto& y) { return x.held < y.held; });
  std::string out = fmt::format("held by session {}", oldest->session);
  if (!oldest->owner.empty()) out += fmt::format(" (owner '{}')", printable(oldest->owner));
  out += fmt::format(" since {} (for {}), token {}", since(oldest->held), cli::human_duration(oldest->held),
                     oldest->token);
  if (lock.holders.size() > 1) out += fmt::format(", +{} more holders", lock.holders.size() - 1);
  return out;
}

std::string describe_holders_now(client::Client& client, const std::string& name) {
  auto info = client.lock_info(name);
  if (!info) return "holder unknown: " + info.status().message();
  if (!*info) return "no holder now";
  return describe_holders(**info);
}

ProgressStyle progress_style(bool wanted) {
  if (!wanted) return ProgressStyle::kOff;
  return ::isatty(STDERR_FILENO) == 1 ? ProgressStyle::kTerminal : ProgressStyle::kLog;
}

WaitProgress::WaitProgress(std::shared_ptr<client::Client> client, std::string name, ProgressStyle style,
                           client::Millis interval)
    : client_(std::move(client)), name_(std::move(name)), style_(style), interval_(interval) {
  if (style_ != ProgressStyle::kOff) thread_ = std::thread([this] { run(); });
}

WaitProgress::~WaitProgress() { stop(); }

void WaitProgress::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WaitProgress::run() {
  const bool terminal = style_ == ProgressStyle::kTerminal;
  const auto started = std::chrono::steady_clock::now();
  bool drawn = false;
  std::unique_lock lock(mu_);
  // A lock granted at once draws nothing.
  cv_.wait_for(lock, terminal ? client::Millis(300) : interval_, [this] { return stopping_; });
  while (!stopping_) {
    lock.unlock();
    const std::string holders = describe_holders_now(*client_, name_);
    const auto waited = std::chrono::duration_cast<client::Millis>(std::chrono::steady_clock::now() - started);
    const std::string line = fmt::format("waiting for lock '{}' ({}): {}", printable(name_),
                                         cli::human_duration(waited), holders);
    lock.lock();
    if (stopping_) break;
    if (terminal) {
      std::cerr << "\r\033[K" << line << std::flush;  // redraw the one progress line
      drawn = true;
    } else {
      // One line per interval, for logs; one write, so that a reader of
      // the log never sees half a line.
      std::cerr << ("leasehold lock: " + line + "\n") << std::flush;
    }
    cv_.wait_for(lock, terminal ? client::Millis(1000) : interval_, [this] { return stopping_; });
  }
  if (drawn) std::cerr << "\r\033[K" << std::flush;
}

}  // namespace leasehold::tools
