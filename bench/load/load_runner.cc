#include "bench/load/load_runner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "bench/load/etcd_mutex_client.h"
#include "bench/load/etcd_txn_client.h"
#include "bench/load/lock_clients.h"
#include "bench/load/zk_lock_client.h"

namespace leasehold::bench {
namespace {

constexpr int kMaxClients = 1024;

struct SharedRun {
  explicit SharedRun(int clients)
      : ready(clients),
        per_client(static_cast<std::size_t>(clients), 0),
        acquire_ns(static_cast<std::size_t>(clients)),
        handoff_ns(static_cast<std::size_t>(clients)) {}
  std::latch ready;                 // every client connected and set up
  std::latch go{1};                 // opened by run_cell() once the window is set
  Clock::time_point measure_start;  // written before `go` opens
  Clock::time_point measure_end;
  std::vector<std::uint64_t> per_client;
  std::vector<std::vector<std::int64_t>> acquire_ns;  // per client, counted cycles
  std::vector<std::vector<std::int64_t>> handoff_ns;
  std::atomic<std::int64_t> release_clock{0};  // LockClient::set_release_clock
  std::mutex error_mu;
  std::string first_error;

  void record_error(int client, const Status& status) {
    std::lock_guard lock(error_mu);
    if (first_error.empty()) {
      first_error = "client " + std::to_string(client) + ": " + status.to_string();
    }
  }
};

Result<std::unique_ptr<LockClient>> make_client(const CellOptions& o, int index) {
  std::string name = o.name_prefix + (o.workload == Workload::kOwnLock
                                          ? ":own:" + std::to_string(index)
                                          : std::string(":one"));
  if (o.system == System::kZookeeper) {
    return make_zookeeper_lock_client(o.endpoint, "/" + name, static_cast<int>(o.lease_ms),
                                      o.io_timeout);
  }
  if (o.system == System::kEtcdMutex) {
    return make_etcd_mutex_client(o.etcd_endpoints, "/" + name, o.lease_ms, o.io_timeout);
  }
  if (o.system == System::kEtcdTxn || o.system == System::kEtcdLogTxn) {
    return make_etcd_txn_client(o.etcd_endpoints, "/" + name, index, o.io_timeout,
                                o.system == System::kEtcdTxn ? EtcdTxnShape::kFloor : EtcdTxnShape::kLogAppend);
  }
  auto conn = RespConnection::connect(o.endpoint, o.io_timeout);
  if (!conn) return conn.status();
  if (o.system == System::kLeasehold) {
    return std::unique_ptr<LockClient>(std::make_unique<LeaseholdLockClient>(
        std::move(conn.value()), std::move(name), "bench-" + std::to_string(index), o.lease_ms,
        /*wait=*/o.workload == Workload::kOneLock, o.pipeline));
  }
  std::random_device seed_source;
  std::uint64_t seed = (static_cast<std::uint64_t>(seed_source()) << 32) ^
                       static_cast<std::uint64_t>(index);
  return std::unique_ptr<LockClient>(std::make_unique<RedisLockClient>(
      std::move(conn.value()), std::move(name), o.lease_ms, o.retry_delay, seed));
}

void client_thread(const CellOptions& o, int index, SharedRun& run) {
  auto made = make_client(o, index);
  std::unique_ptr<LockClient> client;
  if (made) {
    client = std::move(made.value());
    if (o.workload == Workload::kOneLock) client->set_release_clock(&run.release_clock);
    if (Status s = client->setup(); !s) {
      run.record_error(index, s);
      client.reset();
    }
  } else {
    run.record_error(index, made.status());
  }
  run.ready.count_down();
  run.go.wait();
  if (!client) return;

  std::uint64_t counted = 0;
  auto& acquire_ns = run.acquire_ns[static_cast<std::size_t>(index)];
  auto& handoff_ns = run.handoff_ns[static_cast<std::size_t>(index)];
  for (;;) {
    Clock::time_point now = Clock::now();
    if (now >= run.measure_end) break;
    auto stepped = client->step(run.measure_end);
    if (!stepped) {
      run.record_error(index, stepped.status());
      run.per_client[static_cast<std::size_t>(index)] = counted;
      return;
    }
    Clock::time_point done = Clock::now();
    if (stepped.value() && done >= run.measure_start && done < run.measure_end) {
      ++counted;
      acquire_ns.push_back(client->acquire_latency().count());
      if (client->handoff_latency().count() >= 0) handoff_ns.push_back(client->handoff_latency().count());
    }
  }
  run.per_client[static_cast<std::size_t>(index)] = counted;
  if (Status s = client->finish(); !s) run.record_error(index, s);
}

std::vector<std::int64_t> merged(std::vector<std::vector<std::int64_t>>& parts) {
  std::vector<std::int64_t> all;
  for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

}  // namespace

LatencySummary summarize_latencies(std::vector<std::int64_t>& samples_ns) {
  LatencySummary s;
  s.samples = samples_ns.size();
  if (samples_ns.empty()) return s;
  auto rank = [&](double q) {
    // Nearest rank: the smallest sample with at least q of them at or below it.
    auto n = static_cast<double>(samples_ns.size());
    auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(q * n))) - 1;
    std::nth_element(samples_ns.begin(), samples_ns.begin() + static_cast<std::ptrdiff_t>(k),
                     samples_ns.end());
    return static_cast<double>(samples_ns[k]) / 1000.0;
  };
  s.p50_us = rank(0.50);
  s.p99_us = rank(0.99);
  return s;
}

std::uint64_t CellResult::max_per_client() const {
  return per_client.empty() ? 0 : *std::max_element(per_client.begin(), per_client.end());
}

std::uint64_t CellResult::min_per_client() const {
  return per_client.empty() ? 0 : *std::min_element(per_client.begin(), per_client.end());
}

double CellResult::fairness() const {
  std::uint64_t lo = min_per_client();
  if (lo == 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(max_per_client()) / static_cast<double>(lo);
}

CellResult run_cell(const CellOptions& options) {
  CellResult result;
  if (options.clients < 1 || options.clients > kMaxClients) {
    result.error = "clients must be in [1, " + std::to_string(kMaxClients) + "]";
    return result;
  }
  if (options.duration.count() <= 0) {
    result.error = "duration must be positive";
    return result;
  }
  SharedRun run(options.clients);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(options.clients));
  for (int i = 0; i < options.clients; ++i) {
    threads.emplace_back(client_thread, std::cref(options), i, std::ref(run));
  }
  run.ready.wait();
  Clock::time_point start = Clock::now();
  run.measure_start = start + options.warmup;
  run.measure_end = run.measure_start + options.duration;
  run.go.count_down();
  for (auto& t : threads) t.join();

  result.per_client = run.per_client;
  for (auto n : result.per_client) result.total += n;
  double seconds = std::chrono::duration<double>(options.duration).count();
  result.ops_per_s = static_cast<double>(result.total) / seconds;
  result.error = run.first_error;
  auto acquire = merged(run.acquire_ns);
  auto handoff = merged(run.handoff_ns);
  result.acquire = summarize_latencies(acquire);
  result.handoff = summarize_latencies(handoff);
  return result;
}

}  // namespace leasehold::bench
