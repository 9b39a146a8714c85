#include "bench/load/suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/load/redis_benchmark.h"

namespace leasehold::bench {
namespace {

std::string delay_label(std::chrono::microseconds d) {
  if (d.count() == 0) return "0";
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "ms";
  return std::to_string(d.count()) + "us";
}

Measurement to_measurement(const CellResult& r, bool fairness) {
  Measurement m;
  m.ops_per_s = r.ops_per_s;
  m.has_fairness = fairness;
  m.max_per_client = r.max_per_client();
  m.min_per_client = r.min_per_client();
  m.error = r.error;
  m.acquire = r.acquire;
  m.handoff = r.handoff;
  return m;
}

void report(const SuiteOptions& o, const Row& row, const std::string& target,
            const Measurement& m) {
  if (!o.progress) return;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s C=%-3d %-14s %12.0f ops/s", row.workload.c_str(),
                row.clients, target.c_str(), m.ops_per_s);
  std::string text = line;
  if (m.has_fairness) {
    text += "  per-client max " + std::to_string(m.max_per_client) + " min " +
            std::to_string(m.min_per_client);
  }
  const LatencySummary& l = m.has_fairness ? m.handoff : m.acquire;
  if (l.samples > 0) {
    std::snprintf(line, sizeof line, "  %s p50 %.2f ms p99 %.2f ms", m.has_fairness ? "hand-off" : "acquire",
                  l.p50_us / 1000, l.p99_us / 1000);
    text += line;
  }
  if (!m.error.empty()) text += "  ERROR " + m.error;
  o.progress(text);
}

// Systems whose W2 clients wait in a server-side queue (no retry delay).
bool queues(const Target& t) {
  return t.system == System::kLeasehold || t.system == System::kZookeeper ||
         t.system == System::kEtcdMutex || t.system == System::kEtcdTxn || t.system == System::kEtcdLogTxn;
}

// Systems that speak the Redis protocol (W3 runs redis-benchmark on them).
bool speaks_resp(const Target& t) {
  return t.system == System::kLeasehold || t.system == System::kRedis;
}

class SuiteRun {
 public:
  explicit SuiteRun(const SuiteOptions& o) : o_(o) {}

  CellOptions cell(const Target& t, Workload w, int clients) {
    if (o_.before_cell) o_.before_cell();
    CellOptions c;
    c.system = t.system;
    c.workload = w;
    c.endpoint = t.endpoint;
    c.etcd_endpoints = t.etcd_endpoints;
    c.pipeline = t.pipeline;
    c.clients = clients;
    c.warmup = o_.warmup;
    c.duration = o_.duration;
    c.io_timeout = o_.io_timeout;
    c.lease_ms = o_.lease_ms;
    c.name_prefix = o_.name_prefix + ":" + std::to_string(++cell_number_);
    return c;
  }

  void run_w1(std::vector<Row>& rows) {
    for (int clients : o_.clients) {
      Row row{"W1", clients, {}};
      for (const auto& t : o_.targets) {
        Measurement m = to_measurement(run_cell(cell(t, Workload::kOwnLock, clients)), false);
        report(o_, row, t.name, m);
        w1_rate_[{t.name, clients}] = m.ops_per_s;
        row.by_target[t.name] = m;
      }
      rows.push_back(std::move(row));
    }
  }

  void run_w2(std::vector<Row>& rows) {
    bool any_spin = std::any_of(o_.targets.begin(), o_.targets.end(),
                                [](const Target& t) { return !queues(t); });
    for (int clients : o_.clients) {
      std::map<std::string, Measurement> queued;  // leasehold: one run per client count
      for (const auto& t : o_.targets) {
        if (!queues(t)) continue;
        Row probe{"W2", clients, {}};
        Measurement m = to_measurement(run_cell(cell(t, Workload::kOneLock, clients)), true);
        report(o_, probe, t.name, m);
        queued[t.name] = m;
      }
      if (!any_spin) {
        rows.push_back(Row{"W2", clients, queued});
        continue;
      }
      for (auto delay : o_.spin_retry_delays) {
        Row row{"W2 r=" + delay_label(delay), clients, queued};
        for (const auto& t : o_.targets) {
          if (queues(t)) continue;
          CellOptions c = cell(t, Workload::kOneLock, clients);
          c.retry_delay = delay;
          Measurement m = to_measurement(run_cell(c), true);
          report(o_, row, t.name, m);
          row.by_target[t.name] = m;
        }
        rows.push_back(std::move(row));
      }
    }
  }

  void run_w3(std::vector<Row>& rows) {
    for (int clients : o_.clients) {
      Row row{"W3", clients, {}};
      for (const auto& t : o_.targets) {
        if (!speaks_resp(t)) continue;
        RedisBenchmarkOptions b;
        b.binary = o_.redis_benchmark;
        b.endpoint = t.endpoint;
        b.clients = clients;
        b.requests = w3_requests(t.name, clients);
        b.lease_ms = o_.lease_ms;
        // Generous: a slow fsync must not turn into a failure, but it stops.
        b.timeout = o_.duration * 10 + std::chrono::seconds(30);
        Measurement m;
        auto rps = run_redis_benchmark(b);
        if (rps) {
          m.ops_per_s = rps.value();
        } else {
          m.error = rps.status().to_string();
        }
        report(o_, row, t.name, m);
        row.by_target[t.name] = m;
      }
      rows.push_back(std::move(row));
    }
  }

 private:
  std::int64_t w3_requests(const std::string& target, int clients) const {
    if (o_.w3_requests > 0) return o_.w3_requests;
    auto it = w1_rate_.find({target, clients});
    if (it == w1_rate_.end() || it->second <= 0) return o_.w3_min_requests;
    // A W1 cycle is two round trips; W3 is one, so about 2x the W1 rate.
    double seconds = std::chrono::duration<double>(o_.duration).count();
    auto n = static_cast<std::int64_t>(std::llround(it->second * 2 * seconds));
    return std::clamp(n, o_.w3_min_requests, o_.w3_max_requests);
  }

  const SuiteOptions& o_;
  int cell_number_ = 0;
  std::map<std::pair<std::string, int>, double> w1_rate_;
};

}  // namespace

std::vector<Row> run_suite(const SuiteOptions& options) {
  std::vector<Row> rows;
  SuiteRun run(options);
  if (options.w1) run.run_w1(rows);
  if (options.w2) run.run_w2(rows);
  if (options.w3) run.run_w3(rows);
  return rows;
}

}  // namespace leasehold::bench
