// Cluster mode end to end: real etcd, real `leasehold server --etcd` processes,
// clients through the client library. Standbys agree and redirect; kill -9 of
// the primary under lock load; SIGSTOP of the primary past its etcd lease;
// session expiry across a failover stays within the documented bound.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "leasehold/client.h"
#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"
#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {
namespace {

std::shared_ptr<client::Client> make_client(LeaseholdCluster& c) {
  client::ClientOptions o;
  auto eps = client::parse_endpoints(c.endpoints());
  EXPECT_TRUE(eps);
  o.endpoints = *eps;
  o.call_timeout = 3000ms;
  o.connect_timeout = 500ms;
  auto cl = client::Client::create(o);
  EXPECT_TRUE(cl) << cl.status().to_string();
  return *cl;
}

TEST(ClusterTest, StandbyAppliesTheSameLogAndRedirectsWrites) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;
  auto primary = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(primary);
  auto session = primary->call({"SESSION.OPEN", "30000", "OWNER", "agree"});
  ASSERT_FALSE(session.is_error()) << session.str;
  const std::string sid = std::to_string(session.integer);
  for (int i = 0; i < 20; ++i) {
    auto tok = primary->call({"LOCK.ACQUIRE", "lock" + std::to_string(i), sid});
    ASSERT_FALSE(tok.is_error()) << tok.str;
    if (!tok.is_null() && i % 2 == 0) {
      auto rel = primary->call({"LOCK.RELEASE", "lock" + std::to_string(i), sid, std::to_string(tok.integer)});
      ASSERT_FALSE(rel.is_error()) << rel.str;
    }
  }
  ASSERT_TRUE(c->wait_converged(10s));
  // Same state on both (stale reads on the standby are allowed and equal here).
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  ASSERT_EQ(standby->call({"READONLY"}).str, "OK");
  for (int i = 0; i < 20; ++i) {
    const std::string name = "lock" + std::to_string(i);
    auto a = primary->call({"LOCK.INFO", name});
    auto b = standby->call({"LOCK.INFO", name});
    ASSERT_EQ(a.is_null(), b.is_null());
    if (!a.is_null()) {
      // holders[].token and last_token agree.
      ASSERT_EQ(a.elements.size(), b.elements.size());
      for (std::size_t k = 0; k + 1 < a.elements.size(); k += 2) {
        if (a.elements[k].str == "last_token") {
          EXPECT_EQ(a.elements[k + 1].integer, b.elements[k + 1].integer);
        }
      }
    }
  }
  // Writes and keepalives on the standby name the primary, once the standby
  // has learnt its address (the leader key's watch, apart from the log's:
  // until then it answers "no primary").
  resp::Value w;
  EXPECT_TRUE(eventually([&] {
    w = standby->call({"SESSION.OPEN", "1000"});
    return w.is_error() && w.str.rfind("REDIRECT", 0) == 0;
  }, 10s)) << w.debug_string();
  EXPECT_EQ(w.str, "REDIRECT " + loopback(c->node(p).port));
  auto k = standby->call({"SESSION.KEEPALIVE", sid});
  EXPECT_EQ(k.str, "REDIRECT " + loopback(c->node(p).port));
  // The client library follows the redirect from the standby.
  client::ClientOptions o;
  o.endpoints = *client::parse_endpoints(loopback(c->node(s).port));
  auto cl = client::Client::create(o);
  ASSERT_TRUE(cl);
  auto opened = (*cl)->open_session(5000ms, "via-standby");
  ASSERT_TRUE(opened) << opened.status().to_string();
}

// One acknowledged grant: when it was asked for, when acknowledged, its token.
struct Grant {
  SteadyClock::time_point asked;
  SteadyClock::time_point acked;
  std::uint64_t token = 0;
  std::string lock;
};

TEST(ClusterTest, KillPrimaryUnderLoadFailsOverKeepingEveryAcknowledgedGrant) {
  auto c = LeaseholdCluster::start(3, 3);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);

  std::mutex mu;
  std::vector<Grant> grants;
  std::vector<std::uint64_t> released;  // tokens whose release was acknowledged
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::atomic<std::int64_t> first_ack_after_kill_ns{0};
  std::atomic<std::int64_t> kill_ns{0};
  std::vector<std::uint64_t> last_seq(4, 0), sessions(4, 0);
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      auto cl = make_client(*c);
      std::uint64_t session = 0;
      while (session == 0 && !stop) {
        auto s = cl->open_session(30000ms, "worker" + std::to_string(w));
        if (s) session = *s;
        else std::this_thread::sleep_for(50ms);  // deliberate: the load generator's retry pause (runs until stop)
      }
      sessions[static_cast<std::size_t>(w)] = session;
      std::uint64_t seq = 0;
      const std::string lock = "L" + std::to_string(w % 2);
      while (!stop) {
        client::AcquireRequest req;
        req.name = lock;
        req.session = session;
        req.wait = 2000ms;
        req.seq = ++seq;
        const auto asked = SteadyClock::now();
        std::optional<std::uint64_t> token;
        for (;;) {  // retry the SAME seq until answered (idempotent)
          if (stop) return;
          auto r = cl->acquire(req);
          if (r) {
            token = *r;
            break;
          }
          ++errors;
          std::this_thread::sleep_for(50ms);  // deliberate: the load generator's retry pause (runs until stop)
        }
        if (!token) continue;
        const auto acked = SteadyClock::now();
        const std::int64_t k = kill_ns.load();
        if (k != 0 && asked.time_since_epoch().count() > k) {
          std::int64_t expected = 0;
          first_ack_after_kill_ns.compare_exchange_strong(expected, acked.time_since_epoch().count());
        }
        {
          std::lock_guard lock_guard(mu);
          grants.push_back({asked, acked, *token, lock});
        }
        const std::uint64_t rseq = ++seq;
        for (;;) {
          if (stop) return;
          Status st = cl->release(lock, session, *token, rseq);
          if (st) {
            std::lock_guard lock_guard(mu);
            released.push_back(*token);
          }
          if (st || st.code() == ErrorCode::kNotHolder) break;
          ++errors;
          std::this_thread::sleep_for(50ms);  // deliberate: the load generator's retry pause (runs until stop)
        }
        last_seq[static_cast<std::size_t>(w)] = seq;
        (void)cl->keepalive(session);
      }
    });
  }
  const auto grants_acked = [&] {
    std::lock_guard lock_guard(mu);
    return grants.size();
  };
  // Under load before the kill: grants acknowledged on the first primary.
  EXPECT_TRUE(eventually([&] { return grants_acked() >= 20; }, 20s)) << "no load before the kill";
  const std::size_t before = grants_acked();
  const auto killed_at = SteadyClock::now();
  kill_ns = killed_at.time_since_epoch().count();
  c->node(p).process.kill9();
  const int np = c->wait_primary(30s, p);
  if (np < 0) {
    stop = true;
    for (auto& t : workers) t.join();
  }
  ASSERT_GE(np, 0) << "no standby took over";
  // Keep the load going after the failover: a first grant on the new
  // primary, then more. (No ASSERT before the workers are joined.)
  if (eventually([&] { return first_ack_after_kill_ns.load() != 0; }, 15s, 20ms)) {
    const std::size_t at_first = grants_acked();
    EXPECT_TRUE(eventually([&] { return grants_acked() >= at_first + 20; }, 20s))
        << "the load stopped after the failover";
  }
  stop = true;
  for (auto& t : workers) t.join();

  ASSERT_NE(first_ack_after_kill_ns.load(), 0) << "no grant acknowledged after the kill";
  const double failover_s =
      static_cast<double>(first_ack_after_kill_ns.load() - killed_at.time_since_epoch().count()) / 1e9;
  std::printf("[ failover ] kill -9 of the primary -> first acknowledged grant on the new primary: %.2f s "
              "(etcd lease TTL 2 s); grants before %zu, total %zu, retried calls %d\n",
              failover_s, before, grants.size(), errors.load());
  // Checks elapsed time on purpose: the failover stays within its bound.
  EXPECT_LT(failover_s, std::chrono::duration<double>(scaled(12s)).count());
  ASSERT_GT(grants.size(), before);

  // Tokens strictly increase: a grant asked after another was acknowledged
  // has a larger token (also across the failover), and no token repeats
  // for two different grants.
  std::sort(grants.begin(), grants.end(), [](const Grant& a, const Grant& b) { return a.acked < b.acked; });
  for (std::size_t i = 0; i < grants.size(); ++i) {
    for (std::size_t j = 0; j < grants.size(); ++j) {
      if (grants[i].acked < grants[j].asked) {
        ASSERT_LT(grants[i].token, grants[j].token) << "token order broken across grants " << i << "," << j;
      }
    }
  }
  // Every acknowledged release is present: a holder left at the end was
  // never released, and the new primary's last_token of each lock covers
  // every grant of it that was acknowledged. A lock whose last grant was
  // released and that has no waiter is gone from LOCK.INFO (its record is
  // dropped when free): nothing to compare for it. (Comparing the highest
  // token of both locks with whichever lock was left failed when the
  // highest grant was the gone lock's.)
  auto cl = make_client(*c);
  for (const char* name : {"L0", "L1"}) {
    std::uint64_t max_token = 0;
    for (const Grant& g : grants) {
      if (g.lock == name) max_token = std::max(max_token, g.token);
    }
    auto info = cl->lock_info(name);
    ASSERT_TRUE(info) << info.status().to_string();
    if (!info->has_value()) continue;
    EXPECT_GE((*info)->last_token, max_token) << name;
    for (const auto& h : (*info)->holders) {
      EXPECT_EQ(std::count(released.begin(), released.end(), h.token), 0)
          << "an acknowledged release is missing for token " << h.token;
    }
  }
}

TEST(ClusterTest, PausedPrimaryIsDeposedAndItsPendingWriteIsRejected) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  // The primary applies its own appends and knows it leads: it stops its
  // log and leader watches. The standby follows the log and the election
  // through its watches.
  ASSERT_TRUE(c->wait_info(p, "cluster_log_watch", "0", 10s)) << c->log_tails();
  ASSERT_TRUE(c->wait_info(p, "cluster_leader_watch", "0", 10s)) << c->log_tails();
  ASSERT_TRUE(c->wait_info(1 - p, "cluster_log_watch", "1", 10s)) << c->log_tails();
  ASSERT_TRUE(c->wait_info(1 - p, "cluster_leader_watch", "1", 10s)) << c->log_tails();
  auto old = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(old);
  ASSERT_FALSE(old->call({"SESSION.OPEN", "30000", "OWNER", "before"}).is_error());

  c->node(p).process.signal(SIGSTOP);
  // A write reaches the frozen primary's socket; it is read only after SIGCONT.
  ASSERT_TRUE(old->send({"SESSION.OPEN", "30000", "OWNER", "ghost"}));
  const int np = c->wait_primary(20s, p);
  ASSERT_GE(np, 0) << "no new primary while the old one is frozen past its lease";
  auto fresh = RespClient::connect(c->node(np).port);
  ASSERT_TRUE(fresh);
  ASSERT_FALSE(fresh->call({"SESSION.OPEN", "30000", "OWNER", "after"}).is_error());

  c->node(p).process.signal(SIGCONT);
  auto ghost = old->read(10s);
  ASSERT_TRUE(ghost) << ghost.status().to_string();
  EXPECT_TRUE(ghost->is_error()) << "the deposed primary acknowledged a write: " << ghost->integer;
  std::printf("[ deposed ] the resumed primary answered: %s\n", ghost->str.c_str());
  // It steps down and follows the new primary; nothing half-applied.
  EXPECT_TRUE(eventually([&] { return c->role(p) == "standby"; }, 15s, 50ms));
  EXPECT_EQ(c->role(p), "standby");
  ASSERT_TRUE(c->wait_converged(15s));
  for (int i : {p, np}) {
    auto conn = RespClient::connect(c->node(i).port);
    ASSERT_TRUE(conn);
    ASSERT_EQ(conn->call({"READONLY"}).str, "OK");  // p is a standby now
    auto list = conn->call({"SESSION.LIST"});
    std::string owners;
    for (const auto& m : list.elements) {
      for (std::size_t k = 0; k + 1 < m.elements.size(); k += 2) {
        if (m.elements[k].str == "owner") owners += m.elements[k + 1].str + ",";
      }
    }
    EXPECT_EQ(owners.find("ghost"), std::string::npos) << "node " << i << ": " << owners;
    EXPECT_NE(owners.find("before"), std::string::npos) << "node " << i << ": " << owners;
    EXPECT_NE(owners.find("after"), std::string::npos) << "node " << i << ": " << owners;
  }
  // The deposed primary follows again through its log watch, started from
  // the revision after the last entry it saw or wrote: no catch-up needed,
  // and a write of the new primary made now reaches it too.
  EXPECT_TRUE(c->wait_info(p, "cluster_log_watch", "1", 10s)) << c->log_tails();
  EXPECT_EQ(c->info_field(p, "catch_up_recoveries"), "0");
  // It watches the election again, and redirects writes to the new primary.
  EXPECT_TRUE(c->wait_info(p, "cluster_leader_watch", "1", 10s)) << c->log_tails();
  EXPECT_TRUE(c->wait_info(np, "cluster_leader_watch", "0", 10s)) << c->log_tails();
  {
    auto standby = RespClient::connect(c->node(p).port);
    ASSERT_TRUE(standby);
    const std::string redirect = "REDIRECT " + loopback(c->node(np).port);
    std::string seen;
    eventually([&] { return (seen = standby->call({"SESSION.OPEN", "1000"}).str) == redirect; }, 10s, 50ms);
    EXPECT_EQ(seen, redirect);
  }
  ASSERT_FALSE(fresh->call({"SESSION.OPEN", "30000", "OWNER", "later"}).is_error());
  ASSERT_TRUE(c->wait_converged(15s)) << c->log_tails();
  auto follower = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(follower);
  ASSERT_EQ(follower->call({"READONLY"}).str, "OK");
  std::string owners;
  for (const auto& m : follower->call({"SESSION.LIST"}).elements) {
    for (std::size_t k = 0; k + 1 < m.elements.size(); k += 2) {
      if (m.elements[k].str == "owner") owners += m.elements[k + 1].str + ",";
    }
  }
  EXPECT_NE(owners.find("later"), std::string::npos) << owners;
}

TEST(ClusterTest, SessionExpiryAcrossFailoverIsWithinTheBoundAndNeverEarly) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(20s);
  ASSERT_GE(p, 0);
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  constexpr auto kTtl = 4000ms;
  auto s = conn->call({"SESSION.OPEN", std::to_string(kTtl.count())});
  ASSERT_FALSE(s.is_error());
  const std::string sid = std::to_string(s.integer);
  const auto keepalive_sent = SteadyClock::now();
  ASSERT_FALSE(conn->call({"SESSION.KEEPALIVE", sid}).is_error());
  const auto safe_deadline = keepalive_sent + kTtl;  // the client's view
  c->node(p).process.kill9();
  const auto killed = SteadyClock::now();
  const int np = c->wait_primary(20s, p);
  ASSERT_GE(np, 0);
  const auto promoted_seen = SteadyClock::now();  // >= the promotion instant
  // Keepalive-free check: poll SESSION.LIST.
  const std::optional<SteadyClock::time_point> gone = eventually_value([&]() -> std::optional<SteadyClock::time_point> {
    auto q = RespClient::connect(c->node(np).port);
    if (!q) return std::nullopt;
    auto list = q->call({"SESSION.LIST"});
    bool present = false;
    for (const auto& m : list.elements) {
      for (std::size_t k = 0; k + 1 < m.elements.size(); k += 2) {
        if (m.elements[k].str == "id" && std::to_string(m.elements[k + 1].integer) == sid) present = true;
      }
    }
    if (list.is_error() || present) return std::nullopt;
    return SteadyClock::now();
  }, 30s, 20ms);
  ASSERT_TRUE(gone.has_value()) << "the session never expired on the new primary";
  const auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::printf("[ expiry ] TTL %lld ms; kill at +%lld ms; promotion seen at +%lld ms; expired at +%lld ms "
              "after the last keepalive (bound: TTL + time to promotion = %lld ms)\n",
              static_cast<long long>(kTtl.count()), static_cast<long long>(ms(killed - keepalive_sent)),
              static_cast<long long>(ms(promoted_seen - keepalive_sent)),
              static_cast<long long>(ms(*gone - keepalive_sent)),
              static_cast<long long>(ms(kTtl + (promoted_seen - keepalive_sent))));
  // Checks elapsed time on purpose: never before the safe deadline, and
  // within TTL (+ slack) after the promotion.
  EXPECT_GE(*gone, safe_deadline) << "expired before the client's safe deadline";
  EXPECT_LE(*gone, promoted_seen + kTtl + testing::scaled(1500ms)) << "expired later than TTL after promotion (+ slack)";
}


// A RESP3 connection to node i, or nullopt.
std::optional<RespClient> resp3(LeaseholdCluster& c, int i) {
  auto q = RespClient::connect(c.node(i).port, 500ms);
  if (!q || q->call({"HELLO", "3"}, 1s).is_error()) return std::nullopt;
  return std::move(q).value();
}

// The session holding `lock` on node i; 0 if free or unreachable.
std::int64_t holder_on(LeaseholdCluster& c, int i, const std::string& lock) {
  auto q = resp3(c, i);
  if (!q) return 0;
  const resp::Value info = q->call({"LOCK.INFO", lock}, 1s);
  const resp::Value* holders = info.find("holders");
  if (holders == nullptr || holders->elements.empty()) return 0;
  const resp::Value* session = holders->elements[0].find("session");
  return session ? session->integer : 0;
}

// remaining_ms of `session` in node i's SESSION.LIST; -1 if not listed or unreachable.
std::int64_t remaining_on(LeaseholdCluster& c, int i, std::int64_t session) {
  auto q = resp3(c, i);
  if (!q) return -1;
  for (const resp::Value& entry : q->call({"SESSION.LIST"}, 1s).elements) {
    const resp::Value* id = entry.find("id");
    const resp::Value* remaining = entry.find("remaining_ms");
    if (id && remaining && id->integer == session) return remaining->integer;
  }
  return -1;
}

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `leasehold lock` (the C++ client) holds a lock with an ONCLOSE session
// through a kill -9 of the primary: the old primary's connections going
// away end nothing, the client re-binds the session on the new primary
// (SESSION.KEEPALIVE id BIND), and a kill -9 of the holder then frees the
// lock on the new primary after the close grace, well before the TTL. The
// grace (8 s) outlasts the failover: the client cannot tell a dead primary
// from a reset connection, so its safe deadline drops to the last answered
// send + grace until it re-binds.
TEST(ClusterTest, OnCloseSessionSurvivesAFailoverAndItsCloseStillFreesTheLock) {
  auto c = LeaseholdCluster::start(1, 3);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);
  TempDir dir("cluster-onclose");
  const std::string log = dir.file("holder.log");
  auto spawn_cli = [&](const std::string& tag, const std::vector<std::string>& args) {
    SpawnOptions o;
    o.env = {{"LEASEHOLD_ENDPOINTS", c->endpoints()}};
    o.stdout_path = dir.file(tag + ".out");
    o.stderr_path = dir.file(tag + ".err");
    std::vector<std::string> argv{leasehold_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return Subprocess::spawn(argv, o);
  };
  auto holder = spawn_cli("holder", {"lock", "--ttl", "30s", "--close-grace", "8s", "fo", "--", "sh", "-c",
                                     "echo start >> " + log + "; exec sleep 120"});
  ASSERT_TRUE(holder) << holder.status().to_string();
  ASSERT_TRUE(eventually([&] { return read_file(log).find("start") != std::string::npos; }, 20s))
      << read_file(dir.file("holder.err"));
  const std::int64_t sid = holder_on(*c, p, "fo");
  ASSERT_GT(sid, 0);
  ASSERT_TRUE(c->wait_converged(10s));
  c->node(p).process.kill9();
  const int np = c->wait_primary(30s, p);
  ASSERT_GE(np, 0) << c->log_tails();
  EXPECT_EQ(holder_on(*c, np, "fo"), sid) << "the failover ended the session";
  // A keepalive (the first on the new connection re-binds) reached the new
  // primary: its remaining TTL went up between two reads.
  std::int64_t last = remaining_on(*c, np, sid);
  EXPECT_TRUE(eventually([&] {
    const std::int64_t now = remaining_on(*c, np, sid);
    const bool refreshed = last >= 0 && now > last;
    last = now;
    return refreshed;
  }, 25s, 100ms)) << "no keepalive reached the new primary; " << read_file(dir.file("holder.err"));
  EXPECT_TRUE(holder->running()) << "the holder gave up its lock: " << read_file(dir.file("holder.err"));
  const std::int64_t killed_at = wall_ns();
  holder->kill9();
  auto taker = spawn_cli("taker", {"lock", "--wait", "40s", "fo", "--", "sh", "-c", "date +%s%N"});
  ASSERT_TRUE(taker) << taker.status().to_string();
  ASSERT_EQ(taker->wait(45s), std::optional<int>(0)) << read_file(dir.file("taker.err"));
  const auto waited = std::chrono::nanoseconds(std::stoll(read_file(dir.file("taker.out"))) - killed_at);
  std::printf("[ onclose ] kill -9 of the holder after a failover to the next grant: %lld ms (grace 8 s, TTL 30 s)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()));
  EXPECT_LT(waited, 20s) << "freed by the TTL, not by the close on the new primary";
}

// SESSION.OPEN ... REQID r answered by the primary, which then dies: the
// same open on the new primary (a client retrying after a lost reply)
// answers the same session, and no second one exists.
TEST(ClusterTest, AReqidRetryOnTheNewPrimaryAnswersTheSameSession) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  const std::vector<std::string> open{"SESSION.OPEN", "30000", "ONCLOSE", "0", "REQID", "across-failover"};
  const resp::Value first = conn->call(open);
  ASSERT_EQ(first.type, resp::Type::kInteger) << first.debug_string();
  ASSERT_TRUE(c->wait_converged(10s));
  c->node(p).process.kill9();
  const int np = c->wait_primary(30s, p);
  ASSERT_GE(np, 0) << c->log_tails();
  std::optional<RespClient> retry;
  const resp::Value again = eventually_value([&]() -> std::optional<resp::Value> {
    if (!retry) retry = resp3(*c, np);
    if (!retry) return std::nullopt;
    resp::Value v = retry->call(open, 2s);
    if (v.type != resp::Type::kInteger) return std::nullopt;  // not serving yet
    return v;
  }, 20s, 100ms).value_or(resp::Value::error("no answer"));
  ASSERT_EQ(again.type, resp::Type::kInteger) << again.debug_string();
  EXPECT_EQ(again.integer, first.integer);
  auto q = resp3(*c, np);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->call({"SESSION.LIST"}).elements.size(), 1U);
}

}  // namespace
}  // namespace leasehold::testing
