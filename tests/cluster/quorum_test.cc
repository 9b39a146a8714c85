// Cluster mode when etcd loses members, and snapshots + compaction with a
// wiped standby rejoining. Real etcd (3 members) and leasehold processes.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "testkit/cluster_fixture.h"
#include "testkit/eventually.h"

namespace leasehold::testing {
namespace {

// One SESSION.OPEN against whatever node is primary; the reply text.
std::string try_write(LeaseholdCluster& c, std::chrono::milliseconds timeout) {
  for (int i = 0; i < c.size(); ++i) {
    if (!c.node(i).running() || c.role(i) != "primary") continue;
    auto conn = RespClient::connect(c.node(i).port, 500ms);
    if (!conn) continue;
    auto v = conn->call({"SESSION.OPEN", "10000"}, timeout);
    return v.is_error() ? v.str : "OK";
  }
  // No primary: ask any node; a standby answers with its reason.
  for (int i = 0; i < c.size(); ++i) {
    auto conn = RespClient::connect(c.node(i).port, 500ms);
    if (!conn) continue;
    auto v = conn->call({"SESSION.OPEN", "10000"}, timeout);
    return v.is_error() ? v.str : "OK";
  }
  return "no node";
}

// Writes succeed again within scaled(timeout); returns how long that took.
// The last answer goes to `*last` when given (for a failure message).
std::optional<std::chrono::milliseconds> wait_writable(LeaseholdCluster& c, std::chrono::milliseconds timeout,
                                                       std::string* last = nullptr) {
  const auto start = SteadyClock::now();
  const bool writable = eventually([&] {
    const std::string answer = try_write(c, 5s);
    if (last != nullptr) *last = answer;
    return answer == "OK";
  }, timeout, 100ms);
  if (!writable) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
}

TEST(ClusterQuorumTest, MinorityLossIsBriefMajorityLossFailsClearlyAndRecovers) {
  auto c = LeaseholdCluster::start(3, 2);
  ASSERT_TRUE(c);
  ASSERT_GE(c->wait_primary(30s), 0) << "no primary elected\n" << c->log_tails();
  ASSERT_TRUE(wait_writable(*c, 10s));

  c->etcd().kill(0);
  std::string last;
  auto minority = wait_writable(*c, 15s, &last);
  ASSERT_TRUE(minority) << "writes did not resume after one etcd member died; the last write answered '" << last
                        << "'\n"
                        << c->log_tails();
  std::printf("[ quorum ] one of three etcd members killed: writable again after %lld ms\n",
              static_cast<long long>(minority->count()));
  // Checks elapsed time on purpose: losing a minority interrupts writes only briefly.
  EXPECT_LT(*minority, scaled(10s));

  c->etcd().kill(1);
  // Within append timeout + lease TTL + slack, writes fail with a clear error.
  bool acked_without_quorum = false;
  eventually([&] {
    last = try_write(*c, 6s);
    acked_without_quorum = acked_without_quorum || last == "OK";
    return acked_without_quorum ||
           (last.rfind("UNAVAILABLE", 0) == 0 && last.find("etcd unavailable") != std::string::npos);
  }, 20s, 100ms);
  ASSERT_FALSE(acked_without_quorum) << "a write was acknowledged without an etcd quorum";
  std::printf("[ quorum ] majority lost: writes answer '%s'\n", last.c_str());
  EXPECT_EQ(last.rfind("UNAVAILABLE", 0), 0u) << last;
  EXPECT_NE(last.find("etcd unavailable"), std::string::npos) << last;
  for (int i = 0; i < 5; ++i) {
    const std::string again = try_write(*c, 6s);
    EXPECT_NE(again, "OK") << "granted while etcd has no quorum";
  }

  ASSERT_TRUE(c->etcd().restart(0));
  ASSERT_TRUE(c->etcd().restart(1));
  auto back = wait_writable(*c, 60s, &last);
  ASSERT_TRUE(back) << "service did not resume after etcd came back; the last write answered '" << last << "'\n"
                    << c->log_tails();
  std::printf("[ quorum ] members restarted: writable again after %lld ms\n",
              static_cast<long long>(back->count()));
  ASSERT_TRUE(c->wait_converged(20s));
}

// The `field` integer of a LOCK.INFO map; -1 if absent.
std::int64_t map_int(const resp::Value& v, std::string_view field) {
  for (std::size_t k = 0; k + 1 < v.elements.size(); k += 2) {
    if (v.elements[k].str == field) return v.elements[k + 1].integer;
  }
  return -1;
}

// Linearizable reads under etcd majority loss (docs/cluster.md "Reads"):
// the primary's read barrier cannot reach a quorum, so its reads fail with
// a clear -UNAVAILABLE etcd unavailable (later, once it stepped down, a
// standby's -UNAVAILABLE/-REDIRECT), never with data, within a bound; a
// standby's READONLY reads still answer; when the members return,
// linearizable reads answer again and show the lock.
TEST(ClusterQuorumTest, LinearizableReadsFailClearlyWithoutQuorumAndResume) {
  auto c = LeaseholdCluster::start(3, 2);  // --etcd-timeout-ms 1000, lease TTL 2 s
  ASSERT_TRUE(c);
  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  auto session = conn->call({"SESSION.OPEN", "120000"});
  ASSERT_EQ(session.type, resp::Type::kInteger) << session.debug_string();
  auto tok = conn->call({"LOCK.ACQUIRE", "held", std::to_string(session.integer)});
  ASSERT_EQ(tok.type, resp::Type::kInteger) << tok.debug_string();
  auto reader = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(reader);
  ASSERT_EQ(map_int(reader->call({"LOCK.INFO", "held"}), "last_token"), tok.integer);
  ASSERT_TRUE(c->wait_converged(10s));
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  ASSERT_EQ(standby->call({"READONLY"}).str, "OK");

  c->etcd().kill(0);
  c->etcd().kill(1);
  // Each read: one barrier txn that times out after --etcd-timeout-ms, and
  // a read may wait for the barrier in flight first: 2 x 1 s + slack (checks
  // elapsed time on purpose: a refused read answers within that bound).
  const auto kReadBound = scaled(3500ms);
  bool saw_etcd_unavailable = false;
  int reads = 0;
  // Rounds of reads until one round after the primary stepped down (its
  // lease runs out without etcd): refused before and after.
  bool stepped_down = false;
  bool fatal = false;  // what an ASSERT would have stopped at
  const bool round_after_step_down = eventually([&] {
    const bool last_round = stepped_down;
    for (const char* command : {"LOCK.INFO", "LOCK.LIST"}) {
      const auto start = SteadyClock::now();
      auto v = std::string(command) == "LOCK.INFO" ? reader->call({"LOCK.INFO", "held"}, 10s)
                                                   : reader->call({"LOCK.LIST"}, 10s);
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
      ++reads;
      fatal = fatal || !v.is_error();
      EXPECT_TRUE(v.is_error()) << command << " answered without an etcd quorum: " << v.debug_string();
      const bool unavailable = v.str.rfind("UNAVAILABLE", 0) == 0;
      EXPECT_TRUE(unavailable || v.str.rfind("REDIRECT", 0) == 0) << v.str;
      if (unavailable && v.str.find("etcd unavailable") != std::string::npos) saw_etcd_unavailable = true;
      if (reads == 1) {
        std::printf("[ quorum ] majority lost: first linearizable read answers '%s' after %lld ms\n", v.str.c_str(),
                    static_cast<long long>(took.count()));
        EXPECT_EQ(v.str.rfind("UNAVAILABLE etcd unavailable", 0), 0u) << v.str;
      }
      EXPECT_LT(took, kReadBound) << command << " answered '" << v.str << "' only after " << took.count() << " ms";
    }
    // Stale reads on the standby, asked for explicitly, still answer.
    auto stale = standby->call({"LOCK.INFO", "held"}, 3s);
    fatal = fatal || stale.is_error();
    EXPECT_FALSE(stale.is_error()) << stale.str;
    EXPECT_EQ(map_int(stale, "last_token"), tok.integer);
    if (fatal) return true;
    const std::string role = c->role(p);
    stepped_down = stepped_down || (!role.empty() && role != "primary");
    return last_round;
  }, 30s, 50ms);
  ASSERT_FALSE(fatal);
  EXPECT_TRUE(round_after_step_down) << "the primary did not step down without an etcd quorum";
  EXPECT_TRUE(saw_etcd_unavailable);
  std::printf("[ quorum ] %d linearizable reads refused; last: '%s'\n", reads,
              reader->call({"LOCK.INFO", "held"}, 10s).str.c_str());

  ASSERT_TRUE(c->etcd().restart(0));
  ASSERT_TRUE(c->etcd().restart(1));
  const auto restarted = SteadyClock::now();
  resp::Value info;
  eventually([&] {
    const int primary = c->wait_primary(1s);
    if (primary < 0) return false;
    auto r = RespClient::connect(c->node(primary).port, 1s);
    if (!r) return false;
    info = r->call({"LOCK.INFO", "held"}, 5s);
    return !info.is_error();
  }, 45s, 100ms);
  ASSERT_FALSE(info.is_error()) << "linearizable reads did not resume: " << info.str;
  std::printf("[ quorum ] members restarted: linearizable reads answer again after %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - restarted).count()));
  EXPECT_EQ(map_int(info, "last_token"), tok.integer) << info.debug_string();
  bool holder = false;
  for (std::size_t k = 0; k + 1 < info.elements.size(); k += 2) {
    if (info.elements[k].str != "holders") continue;
    for (const resp::Value& h : info.elements[k + 1].elements) {
      holder = holder || (map_int(h, "session") == session.integer && map_int(h, "token") == tok.integer);
    }
  }
  EXPECT_TRUE(holder) << "the lock lost its holder: " << info.debug_string();
}

TEST(ClusterQuorumTest, WipedStandbyRejoinsFromTheEtcdSnapshot) {
  auto c = LeaseholdCluster::start(1, 2, {"--snapshot-every-commands", "50"});
  ASSERT_TRUE(c);
  const int p = c->wait_primary(30s);
  ASSERT_GE(p, 0);
  const int s = 1 - p;
  auto conn = RespClient::connect(c->node(p).port);
  ASSERT_TRUE(conn);
  auto session = conn->call({"SESSION.OPEN", "60000"});
  ASSERT_FALSE(session.is_error());
  const std::string sid = std::to_string(session.integer);
  auto churn = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string name = "snap" + std::to_string(i);
      auto tok = conn->call({"LOCK.ACQUIRE", name, sid});
      ASSERT_FALSE(tok.is_error()) << tok.str;
      if (i % 3 != 0 && !tok.is_null()) {
        ASSERT_FALSE(conn->call({"LOCK.RELEASE", name, sid, std::to_string(tok.integer)}).is_error());
      }
    }
  };
  churn(0, 200);
  // Wipe the standby while the primary keeps writing (snapshots + compaction).
  c->node(s).process.kill9();
  std::filesystem::remove_all(c->node(s).data_dir);
  churn(200, 400);
  ASSERT_NE(c->info_field(p, "snapshots_saved"), "0");
  ASSERT_NE(c->info_field(p, "log_first_index"), "1") << "the log prefix was not deleted";
  ASSERT_TRUE(c->spawn(s));
  churn(400, 450);
  ASSERT_TRUE(c->wait_converged(20s));
  EXPECT_EQ(c->role(s), "standby");
  // Same state: every lock's last_token and holders agree.
  auto standby = RespClient::connect(c->node(s).port);
  ASSERT_TRUE(standby);
  ASSERT_EQ(standby->call({"READONLY"}).str, "OK");  // stale reads on the standby
  auto a = conn->call({"LOCK.LIST"});
  auto b = standby->call({"LOCK.LIST"});
  ASSERT_EQ(a.elements.size(), b.elements.size());
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    const auto& la = a.elements[i].elements;
    const auto& lb = b.elements[i].elements;
    ASSERT_EQ(la.size(), lb.size());
    for (std::size_t k = 0; k + 1 < la.size(); k += 2) {
      if (la[k].str == "name" || la[k].str == "last_token") {
        EXPECT_EQ(la[k + 1].str, lb[k + 1].str);
        EXPECT_EQ(la[k + 1].integer, lb[k + 1].integer);
      }
    }
  }
  EXPECT_EQ(c->info_field(s, "applied_revision"), c->info_field(p, "applied_revision"));
}

// No etcd at all at start: recovery retries for a bounded time, then the
// server exits with a clear error (and, under ASan, without touching the log
// its failed node open destroyed).
TEST(ClusterQuorumTest, UnreachableEtcdAtStartFailsCleanlyWithinTheBound) {
  TempDir dir;
  const std::uint16_t port = free_port();
  const std::string stderr_path = dir.path() + "/stderr";
  SpawnOptions opts;
  opts.stderr_path = stderr_path;
  const auto started = SteadyClock::now();
  auto p = Subprocess::spawn({leasehold_binary(), "server", "--listen", loopback(port), "--data-dir",
                              dir.path() + "/data", "--etcd", "http://" + loopback(free_port()), "--cluster",
                              "test", "--etcd-timeout-ms", "200"},
                             opts);
  ASSERT_TRUE(p) << p.status().to_string();
  const auto code = p->wait(20s);  // scaled by wait()
  ASSERT_TRUE(code.has_value()) << "the server did not give up";
  const auto took = SteadyClock::now() - started;
  EXPECT_EQ(*code, 69);  // EX_UNAVAILABLE (common/exit_codes.h)
  EXPECT_LT(took, scaled(15s));  // checks elapsed time on purpose: the retries are bounded
  std::ifstream in(stderr_path);
  const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("leasehold server: "), std::string::npos) << err;
  EXPECT_NE(err.find("etcd unavailable"), std::string::npos) << err;
  EXPECT_EQ(err.find("Sanitizer"), std::string::npos) << err;
}

// Every etcd member down for several seconds (a 1-member etcd restarted):
// writes fail clearly meanwhile, and once etcd is back the node serves again
// by itself. gRPC channels that failed throughout the outage can stay
// failed after it; the etcd client renews them (etcd/connections.h).
TEST(ClusterQuorumTest, FullEtcdOutageRecoversByItself) {
  auto c = LeaseholdCluster::start(1, 1);
  ASSERT_TRUE(c);
  ASSERT_GE(c->wait_primary(30s), 0);
  ASSERT_TRUE(wait_writable(*c, 10s));
  c->etcd().kill(0);
  // Down until the node lost its election lease and could not revoke it
  // (cluster_abandoned_leases), several seconds; writes refused meanwhile.
  std::string during;
  bool acked = false;
  const bool abandoned = eventually([&] {
    during = try_write(*c, 3s);
    acked = acked || during == "OK";
    return acked || std::stoi("0" + c->info_field(0, "cluster_abandoned_leases")) >= 1;
  }, 30s, 200ms);
  ASSERT_FALSE(acked) << "a write was acknowledged with etcd down";
  ASSERT_TRUE(abandoned) << "the node kept its lease with etcd down\n" << c->log_tails();
  EXPECT_EQ(during.rfind("UNAVAILABLE", 0), 0u) << during;
  ASSERT_TRUE(c->etcd().restart(0));
  auto back = wait_writable(*c, 20s);
  ASSERT_TRUE(back) << "no write accepted within 20 s of etcd's return; last: " << try_write(*c, 3s);
  std::printf("[ quorum ] etcd down past the lease, restarted: writable again after %lld ms\n",
              static_cast<long long>(back->count()));
  // The lease lost in the outage could not be revoked then; the node revoked
  // it once etcd answered, rather than wait behind its own old key for the
  // fresh TTL etcd gives every lease when it restarts.
  EXPECT_EQ(c->info_field(0, "cluster_abandoned_leases"), "0");
  EXPECT_GE(std::stoi("0" + c->info_field(0, "cluster_abandoned_leases_revoked")), 1);
  EXPECT_EQ(c->info_field(0, "cluster_campaign"), "primary");
}

// INFO "# Cluster" says where each node's campaign stands: the primary with
// its election key, the standby as a candidate waiting behind it.
TEST(ClusterQuorumTest, InfoShowsWhereEachNodesCampaignStands) {
  auto c = LeaseholdCluster::start(1, 2);
  ASSERT_TRUE(c);
  const int primary = c->wait_primary(30s);
  ASSERT_GE(primary, 0);
  const int standby = 1 - primary;
  eventually([&] {
    return c->info_field(primary, "cluster_campaign") == "primary" &&
           c->info_field(standby, "cluster_campaign") == "candidate";
  }, 20s, 50ms);
  EXPECT_EQ(c->info_field(primary, "cluster_campaign"), "primary");
  EXPECT_NE(c->info_field(primary, "cluster_campaign_detail").find("/election/"), std::string::npos)
      << c->info_field(primary, "cluster_campaign_detail");
  EXPECT_EQ(c->info_field(standby, "cluster_campaign"), "candidate");
  EXPECT_EQ(c->info_field(standby, "cluster_campaign_detail").rfind("lease ", 0), 0u)
      << c->info_field(standby, "cluster_campaign_detail");
  EXPECT_FALSE(c->info_field(standby, "cluster_campaign_phase_ms").empty());
  EXPECT_EQ(c->info_field(standby, "cluster_abandoned_leases"), "0");
}

// --etcd-startup-wait-ms 0: a node started while etcd is down keeps retrying
// (with backoff, one warning per attempt, not listening yet) and, once etcd
// is back, recovers, listens, is elected and serves: no supervisor needed.
TEST(ClusterQuorumTest, NodeStartedWhileEtcdIsDownWaitsAndServesOnceEtcdAnswers) {
  auto etcd = EtcdCluster::start({.members = 1});
  ASSERT_TRUE(etcd) << etcd.status().to_string();
  (*etcd)->kill(0);
  TempDir dir;
  const std::uint16_t port = free_port();
  const std::string stderr_path = dir.path() + "/stderr";
  SpawnOptions opts;
  opts.stderr_path = stderr_path;
  auto p = Subprocess::spawn({leasehold_binary(), "server", "--listen", loopback(port), "--advertise",
                              loopback(port), "--data-dir", dir.path() + "/data", "--etcd", (*etcd)->endpoints(),
                              "--cluster", "test", "--etcd-timeout-ms", "200", "--etcd-lease-ttl", "2",
                              "--etcd-startup-wait-ms", "0"},
                             opts);
  ASSERT_TRUE(p) << p.status().to_string();
  // Checks elapsed time on purpose: still waiting 4 s later (a lower bound,
  // not scaled), i.e. past several retries.
  EXPECT_FALSE(p->wait(4s).has_value()) << "the server gave up although it was told to wait";
  {
    std::ifstream in(stderr_path);
    const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(err.find("cluster recovery: etcd unavailable, retrying"), std::string::npos) << err;
  }
  ASSERT_TRUE((*etcd)->restart(0));
  ASSERT_TRUE(wait_for_port(port, 30s)) << "the server did not come up after etcd returned";
  std::string last;
  eventually([&] {
    auto conn = RespClient::connect(port, 1s);
    if (!conn) return false;
    auto v = conn->call({"SESSION.OPEN", "10000"}, 5s);
    last = v.is_error() ? v.str : "OK";
    return last == "OK";
  }, 30s, 100ms);
  EXPECT_EQ(last, "OK") << "no write was accepted after etcd returned";
  p->signal(SIGTERM);
  const auto code = p->wait(20s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace leasehold::testing
