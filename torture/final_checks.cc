// torture/final_checks.cc: see final_checks.h.
#include "torture/final_checks.h"

#include <sstream>
#include <thread>

#include "client/client_core.h"
#include "leasehold/client.h"
#include "leasehold/session.h"

namespace leasehold::torture {
namespace {

using client::Clock;
using client::Millis;

Op record(const std::string& kind, const std::string& key) {
  Op op;
  op.op = kind;
  op.process = -1;
  op.key = key;
  op.inv = now_ns();
  return op;
}

// A reply as one line (nested replies in brackets), for a failure's record.
std::string flatten(const resp::Value& v) {
  if (v.type == resp::Type::kInteger) return std::to_string(v.integer);
  if (v.elements.empty()) return v.type == resp::Type::kNull ? "(nil)" : v.str;
  std::string out = "[";
  for (const resp::Value& e : v.elements) out += (out.size() > 1 ? " " : "") + flatten(e);
  return out + "]";
}

// What the server says about a lock a liveness acquire did not get: its
// holders and waiters (LOCK.INFO) and the answering node's role, sessions,
// armed session timers and pending proposals, and in cluster mode where its
// campaign stands (INFO), so that a kept failing history shows whether a
// holder's session outlived its TTL unarmed or why no node was primary.
std::string diagnose(client::Client& c, const std::string& name) {
  client::detail::CallSpec spec;
  spec.deadline = Clock::now() + Millis(3000);
  spec.retry = client::detail::Retry::kIfNotSent;
  std::string out = "LOCK.INFO ";
  auto lock = c.core().call({"LOCK.INFO", name}, spec);
  out += lock ? flatten(*lock) : lock.status().to_string();
  auto info = c.core().call({"INFO"}, spec);
  if (!info) return out + "; INFO " + info.status().to_string();
  std::istringstream lines(info->str);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const char* field : {"role:", "listen:", "applied_index:", "pending_proposals:", "sessions:", "timed_sessions:",
                              "locks:", "waiters:", "node_failure:", "parked_waits:", "cluster_campaign:",
                              "cluster_campaign_detail:", "cluster_campaign_phase_ms:", "cluster_abandoned_leases:"}) {
      if (line.rfind(field, 0) == 0) out += "; " + line;
    }
  }
  return out;
}

void lock_liveness(client::Client& c, std::uint64_t session, const std::string& name, client::LockMode mode,
                   std::uint32_t limit, Millis bound, HistoryWriter& history) {
  Op live = record("liveness", name);
  Op acq = record("acquire", name);
  acq.mode = std::string(client::lock_mode_name(mode));
  acq.limit = limit;
  acq.session = session;
  client::AcquireRequest req;
  req.name = name;
  req.session = session;
  req.mode = mode;
  req.limit = limit;
  req.wait = bound;
  auto r = c.acquire(req);
  acq.cmp = now_ns();
  live.cmp = acq.cmp;
  if (r && r.value()) {
    acq.token = *r.value();
    acq.out = Outcome::kOk;
    live.out = Outcome::kOk;
    history.write(acq);
    (void)c.release(name, session, acq.token);
  } else {
    acq.out = r ? Outcome::kFail : Outcome::kUnknown;
    live.out = Outcome::kFail;
    live.aux = (r ? std::string("not granted") : r.status().to_string()) + " | " + diagnose(c, name);
    history.write(acq);
  }
  history.write(live);
}

// diagnose() asked of every endpoint on its own (role, campaign, ...), for
// a run where no session could be opened at all.
std::string diagnose_nodes(const client::ClientOptions& all) {
  std::string out;
  for (const client::Endpoint& e : all.endpoints) {
    client::ClientOptions one = all;
    one.endpoints = {e};
    one.call_timeout = Millis(3000);
    auto created = client::Client::create(one);
    out += (out.empty() ? "" : " || ") + e.to_string() + " ";
    out += created ? diagnose(*created.value(), "session") : created.status().to_string();
  }
  return out;
}

}  // namespace

void run_final_checks(const std::string& endpoints, int keys, std::chrono::milliseconds bound,
                      HistoryWriter& history) {
  client::ClientOptions options;
  options.endpoints = client::parse_endpoints(endpoints).value();
  options.call_timeout = Millis(5000);
  auto created = client::Client::create(options);
  std::shared_ptr<client::Client> c = std::move(created).value();
  const auto deadline = Clock::now() + bound;
  Op live_session = record("liveness", "session");
  std::unique_ptr<client::Session> session;
  std::string last_error;
  while (!session && Clock::now() < deadline) {
    client::SessionOptions so;
    so.ttl = Millis(30'000);
    so.owner = "torture-final";
    auto s = client::Session::open(c, so);
    if (s) {
      session = std::move(s).value();
    } else {
      last_error = s.status().to_string();
      std::this_thread::sleep_for(Millis(100));  // polling the server's return
    }
  }
  if (!session) {
    live_session.cmp = now_ns();
    live_session.out = Outcome::kFail;
    live_session.aux = "no session could be opened, last error: " + last_error + " | " + diagnose_nodes(options);
    history.write(live_session);
    return;
  }
  for (int k = 0; k < keys; ++k) {
    lock_liveness(*c, session->id(), "x" + std::to_string(k), client::LockMode::kExclusive, 0, bound, history);
  }
  lock_liveness(*c, session->id(), "rw0", client::LockMode::kExclusive, 0, bound, history);
  lock_liveness(*c, session->id(), "sem0", client::LockMode::kSemaphore, 2, bound, history);
  for (int k = 0; k < keys; ++k) {
    const std::string key = "f" + std::to_string(k);
    Op get = record("fget", key);
    auto g = c->fence_get(key);
    if (g && g.value()) {
      get.value = g.value()->value;
      get.token = g.value()->token;
    }
    get.cmp = now_ns();
    get.out = g ? Outcome::kOk : Outcome::kUnknown;
    history.write(get);
  }
  // Compat keys: SET NX must succeed once the last holder's PX ran out.
  for (int k = 0; k < keys; ++k) {
    const std::string key = "c" + std::to_string(k);
    Op live = record("liveness", key);
    const auto end = Clock::now() + bound;
    for (int attempt = 1;; ++attempt) {
      Op set = record("cset", key);
      set.value = "final-" + std::to_string(attempt);
      set.limit = 60'000;
      client::detail::CallSpec spec;
      spec.deadline = Clock::now() + Millis(5000);
      spec.retry = client::detail::Retry::kIfNotSent;
      auto r = c->core().call({"SET", key, set.value, "NX", "PX", "60000", "TOKEN"}, spec);
      set.cmp = now_ns();
      if (r && r->type == resp::Type::kInteger) {
        set.token = static_cast<std::uint64_t>(r->integer);
        set.out = Outcome::kOk;
      } else {
        set.out = r && r->type == resp::Type::kNull ? Outcome::kFail : Outcome::kUnknown;
      }
      history.write(set);
      if (set.out == Outcome::kOk || Clock::now() >= end) {
        live.out = set.out == Outcome::kOk ? Outcome::kOk : Outcome::kFail;
        break;
      }
      std::this_thread::sleep_for(Millis(100));  // polling the key's expiry
    }
    live.cmp = now_ns();
    history.write(live);
  }
  (void)session->close();
}

}  // namespace leasehold::torture
