#include "bench/load/ceiling.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace leasehold::bench {
namespace {

using Clock = std::chrono::steady_clock;

double mean_of_present(double a, double b) {
  if (a > 0 && b > 0) return (a + b) / 2;
  if (a > 0) return a;
  return b > 0 ? b : -1;
}

std::string ms_text(double us) {
  char buf[32];
  if (us < 0) return "n/a";
  std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  return buf;
}

}  // namespace

Result<LatencySummary> probe_fsync(const std::string& dir, ProbeBounds bounds) {
  std::string path = dir + "/.leasehold-fsync-probe-XXXXXX";
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return Status(ErrorCode::kIoError, "mkstemp in " + dir + ": " + std::strerror(errno));
  ::unlink(name.data());  // the open fd keeps it; nothing is left behind
  // Preallocated as the log's journal is (log/entry_journal.h): every block
  // written and synced first, so the timed writes change no size or extent.
  constexpr std::size_t kBlock = 4096;
  constexpr std::size_t kBlocks = 64;
  std::vector<char> block(kBlock, '\0');
  Status status = Status::ok();
  for (std::size_t i = 0; i < kBlocks && status; ++i) {
    if (::pwrite(fd, block.data(), kBlock, static_cast<off_t>(i * kBlock)) != static_cast<ssize_t>(kBlock)) {
      status = Status(ErrorCode::kIoError, std::string("write: ") + std::strerror(errno));
    }
  }
  if (status && ::fsync(fd) != 0) status = Status(ErrorCode::kIoError, std::string("fsync: ") + std::strerror(errno));
  std::fill(block.begin(), block.end(), 'x');
  std::vector<std::int64_t> samples;
  Clock::time_point end = Clock::now() + bounds.max_time;
  while (status && static_cast<int>(samples.size()) < bounds.max_samples && Clock::now() < end) {
    const off_t at = static_cast<off_t>((samples.size() % kBlocks) * kBlock);
    if (::pwrite(fd, block.data(), kBlock, at) != static_cast<ssize_t>(kBlock)) {
      status = Status(ErrorCode::kIoError, std::string("write: ") + std::strerror(errno));
      break;
    }
    Clock::time_point t0 = Clock::now();
    if (::fdatasync(fd) != 0) {
      status = Status(ErrorCode::kIoError, std::string("fdatasync: ") + std::strerror(errno));
      break;
    }
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  ::close(fd);
  if (!status) return status;
  if (samples.empty()) return Status(ErrorCode::kTimedOut, "no fdatasync finished in time");
  return summarize_latencies(samples);
}

Result<LatencySummary> probe_ping(const Endpoint& endpoint, std::chrono::milliseconds io_timeout) {
  ProbeBounds bounds;
  bounds.max_samples = 2000;
  auto conn = RespConnection::connect(endpoint, io_timeout);
  if (!conn) return conn.status();
  std::vector<std::int64_t> samples;
  Clock::time_point end = Clock::now() + bounds.max_time;
  while (static_cast<int>(samples.size()) < bounds.max_samples && Clock::now() < end) {
    Clock::time_point t0 = Clock::now();
    auto reply = conn->call({"PING"});
    if (!reply) return reply.status();
    if (reply->is_error()) return Status(ErrorCode::kInternal, "PING replied " + reply->debug_string());
    samples.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  }
  if (samples.empty()) return Status(ErrorCode::kTimedOut, "no PING answered in time");
  return summarize_latencies(samples);
}

double Ceiling::fsync_us() const {
  std::vector<double> all = fsync_between_us;
  for (double v : {fsync_before_us, fsync_after_us}) {
    if (v > 0) all.push_back(v);
  }
  if (all.empty()) return -1;
  std::sort(all.begin(), all.end());
  std::size_t n = all.size();
  return n % 2 == 1 ? all[n / 2] : (all[n / 2 - 1] + all[n / 2]) / 2;
}
double Ceiling::rtt_us() const { return mean_of_present(rtt_before_us, rtt_after_us); }

double Ceiling::handoff_per_s() const {
  return valid() ? 1e6 / (fsync_us() + rtt_us()) : -1;
}

double Ceiling::batching_per_s(int clients) const {
  return valid() ? clients * 1e6 / (2 * (fsync_us() + rtt_us())) : -1;
}

std::string format_ceiling(const Ceiling& c) {
  std::string between;
  if (!c.fsync_between_us.empty()) {
    auto [lo, hi] = std::minmax_element(c.fsync_between_us.begin(), c.fsync_between_us.end());
    between = ", " + std::to_string(c.fsync_between_us.size()) + " probes between cells " + ms_text(*lo) + " to " +
              ms_text(*hi);
  }
  std::string out = "ceiling: fdatasync p50 " + ms_text(c.fsync_us()) + " (in-place 4 KiB writes; median; before " +
                    ms_text(c.fsync_before_us) + ", after " + ms_text(c.fsync_after_us) + between + ", in " +
                    c.fsync_dir + "); PING RTT p50 " + ms_text(c.rtt_us()) + " (before " +
                    ms_text(c.rtt_before_us) + ", after " + ms_text(c.rtt_after_us) + ", to " +
                    c.rtt_target + ")\n";
  if (!c.valid()) return out + "ceiling: n/a (a probe failed)\n";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "ceiling: W2 hand-off 1/(fsync+RTT) = %.0f grants/s; W1 batching C/(2(fsync+RTT)) = "
                "%.0f x C cycles/s\n",
                c.handoff_per_s(), c.batching_per_s(1));
  return out + buf;
}

}  // namespace leasehold::bench
