#include "bench/capacity/session_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "bench/load/load_runner.h"

namespace leasehold::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct FirstError {
  std::mutex mu;
  std::string text;
  std::atomic<bool> seen{false};
  void record(const std::string& e) {
    std::lock_guard lock(mu);
    if (text.empty()) text = e;
    seen = true;
  }
};

// Lowers the calling thread's priority (Linux: a thread id is a valid
// PRIO_PROCESS target and the nice value is per thread). Raising a nice
// value needs no privilege; a failure leaves the thread as it was.
void lower_this_thread(int nice) {
  if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
}

}  // namespace

OpenResult open_sessions(const Endpoint& endpoint, std::uint64_t count, std::int64_t ttl_ms, int connections,
                         int depth, Clock::time_point deadline, std::chrono::milliseconds io_timeout,
                         int load_nice) {
  OpenResult result;
  std::atomic<std::uint64_t> claimed{0};  // sessions handed out to threads
  std::vector<std::vector<std::int64_t>> ids(static_cast<std::size_t>(connections));
  FirstError error;
  const std::string ttl = std::to_string(ttl_ms);
  Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      lower_this_thread(load_nice);
      auto conn = RespConnection::connect(endpoint, io_timeout);
      if (!conn) return error.record(conn.status().to_string());
      auto& mine = ids[static_cast<std::size_t>(c)];
      std::vector<std::vector<std::string_view>> batch;
      while (!error.seen && Clock::now() < deadline) {
        std::uint64_t from = claimed.fetch_add(static_cast<std::uint64_t>(depth));
        if (from >= count) return;
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(depth), count - from));
        batch.assign(n, {"SESSION.OPEN", ttl});
        if (Status s = conn->send(batch); !s) return error.record(s.to_string());
        for (std::size_t i = 0; i < n; ++i) {
          auto reply = conn->receive();
          if (!reply) return error.record(reply.status().to_string());
          if (reply->type != resp::Type::kInteger) {
            return error.record("SESSION.OPEN replied " + reply->debug_string());
          }
          mine.push_back(reply->integer);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& part : ids) result.ids.insert(result.ids.end(), part.begin(), part.end());
  result.per_s = result.seconds > 0 ? static_cast<double>(result.ids.size()) / result.seconds : 0;
  result.error = error.text;
  if (result.error.empty() && result.ids.size() < count) result.error = "deadline passed";
  return result;
}

KeepaliveResult keepalive_load(const Endpoint& endpoint, const std::vector<std::int64_t>& ids, int connections,
                               int threads, std::chrono::milliseconds duration,
                               std::chrono::milliseconds io_timeout, int load_nice) {
  KeepaliveResult result;
  if (ids.empty() || connections < 1 || threads < 1) {
    result.error = "no sessions, connections or threads";
    return result;
  }
  threads = std::min(threads, connections);
  FirstError error;
  std::atomic<std::uint64_t> done{0};
  std::vector<std::vector<std::int64_t>> rtt_ns(static_cast<std::size_t>(threads));
  Clock::time_point start, end;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      lower_this_thread(load_nice);
      // This thread's share of the connections; each has one request in flight.
      std::vector<RespConnection> conns;
      for (int c = t; c < connections; c += threads) {
        auto conn = RespConnection::connect(endpoint, io_timeout);
        if (!conn) {
          error.record(conn.status().to_string());
          break;
        }
        conns.push_back(std::move(conn.value()));
      }
      std::mt19937_64 rng(static_cast<std::uint64_t>(t) * 7919 + 1);
      std::uniform_int_distribution<std::size_t> pick(0, ids.size() - 1);
      std::vector<std::string> sent_ids(conns.size());
      std::vector<Clock::time_point> sent_at(conns.size());
      auto& rtts = rtt_ns[static_cast<std::size_t>(t)];
      ++ready;
      while (!go) std::this_thread::yield();
      auto send = [&](std::size_t i) {
        sent_ids[i] = std::to_string(ids[pick(rng)]);
        sent_at[i] = Clock::now();
        return conns[i].send({{"SESSION.KEEPALIVE", sent_ids[i]}});
      };
      for (std::size_t i = 0; i < conns.size(); ++i) {
        if (Status s = send(i); !s) return error.record(s.to_string());
      }
      // Round robin: read each connection's reply, then send its next one.
      while (!error.seen) {
        for (std::size_t i = 0; i < conns.size(); ++i) {
          auto reply = conns[i].receive();
          if (!reply) return error.record(reply.status().to_string());
          if (reply->type != resp::Type::kInteger) {
            return error.record("SESSION.KEEPALIVE " + sent_ids[i] + " replied " + reply->debug_string());
          }
          Clock::time_point now = Clock::now();
          if (now >= end) return;  // this connection's last reply is read
          rtts.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent_at[i]).count());
          done.fetch_add(1, std::memory_order_relaxed);
          if (Status s = send(i); !s) return error.record(s.to_string());
        }
      }
    });
  }
  while (ready.load() < threads && !error.seen) std::this_thread::yield();
  start = Clock::now();
  end = start + duration;
  go = true;
  for (auto& t : pool) t.join();
  double seconds = std::chrono::duration<double>(std::min(Clock::now(), end) - start).count();
  result.done = done.load();
  result.per_s = seconds > 0 ? static_cast<double>(result.done) / seconds : 0;
  std::vector<std::int64_t> all;
  for (auto& part : rtt_ns) all.insert(all.end(), part.begin(), part.end());
  LatencySummary l = summarize_latencies(all);
  result.p50_ms = l.p50_us / 1000;
  result.p99_ms = l.p99_us / 1000;
  result.error = error.text;
  return result;
}

}  // namespace leasehold::bench
