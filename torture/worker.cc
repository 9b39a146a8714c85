// torture/worker.cc: see worker.h.
#include "torture/worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <thread>

#include "client/client_core.h"
#include "leasehold/client.h"
#include "leasehold/session.h"
#include "torture/fenced_register.h"
#include "torture/history.h"

namespace leasehold::torture {
namespace {

using client::Clock;
using client::Millis;

// No reply: the operation may or may not have taken effect.
bool is_unknown(const Status& st) {
  switch (st.code()) {
    case ErrorCode::kUnreachable:
    case ErrorCode::kTimedOut:
    case ErrorCode::kUnavailable:
    case ErrorCode::kIoError:
    case ErrorCode::kInternal:
    case ErrorCode::kRedirect:
      return true;
    default:
      return false;
  }
}

class Worker {
 public:
  Worker(const WorkerConfig& config, std::shared_ptr<client::Client> client, std::unique_ptr<HistoryWriter> history)
      : cfg_(config), rng_(config.seed), client_(std::move(client)), history_(std::move(history)),
        register_(config.register_dir),
        holding_fd_(::open((config.register_dir + "/holding-" + std::to_string(config.id)).c_str(),
                           O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {}
  ~Worker() {
    if (holding_fd_ >= 0) ::close(holding_fd_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void run() {
    const auto end = Clock::now() + std::chrono::seconds(cfg_.seconds);
    while (Clock::now() < end) {
      if (!ensure_session()) continue;
      const auto pick = pick_int(0, 99);
      const int k = pick_int(0, cfg_.keys - 1);
      if (pick < 45) {
        lock_round("x" + std::to_string(k), client::LockMode::kExclusive, 0, true);
      } else if (pick < 60) {
        const bool shared = pick_int(0, 2) != 0;
        lock_round("rw0", shared ? client::LockMode::kShared : client::LockMode::kExclusive, 0, false);
      } else if (pick < 75) {
        lock_round("sem0", client::LockMode::kSemaphore, 2, false);
      } else {
        compat_round("c" + std::to_string(k));
      }
    }
    if (session_) (void)session_->close();
  }

 private:
  // Tells the nemesis (pause-client prefers holders, and among them those
  // whose fenced writes are still to come) what this worker holds.
  enum class Holding : char { kNone = '0', kHeld = '1', kBeforeWrite = '2' };
  void set_holding(Holding holding) {
    const char c = static_cast<char>(holding);
    if (holding_fd_ >= 0) (void)!::pwrite(holding_fd_, &c, 1, 0);
  }
  int pick_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  void sleep_ms(int ms) { std::this_thread::sleep_for(Millis(ms)); }  // workload timing, not synchronisation
  Op base(const std::string& kind, const std::string& key) {
    Op op;
    op.op = kind;
    op.process = cfg_.id;
    op.key = key;
    op.session = session_ ? session_->id() : 0;
    op.inv = now_ns();
    return op;
  }
  void finish(Op& op, Outcome out) {
    op.out = out;
    op.cmp = now_ns();
    history_->write(op);
  }

  bool ensure_session() {
    if (session_ && !session_->lost()) return true;
    session_.reset();  // closes (bounded) a session that ended
    client::SessionOptions so;
    so.ttl = Millis(cfg_.ttl_ms);
    so.owner = "torture-" + std::to_string(cfg_.id);
    if (cfg_.close_grace_ms >= 0) so.close_grace = Millis(cfg_.close_grace_ms);
    auto s = client::Session::open(client_, so);
    if (!s) {
      sleep_ms(50);  // the server is down or paused: try again shortly
      return false;
    }
    session_ = std::move(s).value();
    seq_ = 0;
    return true;
  }

  void lock_round(const std::string& name, client::LockMode mode, std::uint32_t limit, bool write) {
    client::AcquireRequest req;
    req.name = name;
    req.session = session_->id();
    req.mode = mode;
    req.limit = limit;
    req.wait = Millis(pick_int(200, cfg_.ttl_ms));
    req.seq = ++seq_;
    Op acq = base("acquire", name);
    acq.mode = std::string(client::lock_mode_name(mode));
    acq.limit = limit;
    auto r = client_->acquire(req);
    if (!r && is_unknown(r.status()) && !session_->lost()) {
      // The reply was lost: ask again with the same SEQ. The server answers
      // from its idempotence table (the first grant) or re-attaches to the
      // queued wait; it never grants twice.
      acq.aux = r.status().to_string();
      finish(acq, Outcome::kUnknown);
      // One logical acquire: the retry's record keeps the first invoke time
      // (the token may have been assigned then; the token-order check
      // compares with grants acknowledged before the invoke).
      acq.aux.clear();
      acq.token = 0;
      r = client_->acquire(req);
      acq.aux = "seq-retry " + std::to_string(req.seq) + (r ? "" : " " + r.status().to_string());
    }
    if (!r) {
      if (acq.aux.empty()) acq.aux = r.status().to_string();
      finish(acq, is_unknown(r.status()) ? Outcome::kUnknown : Outcome::kFail);
      if (is_unknown(r.status()) || r.status().code() == ErrorCode::kSessionExpired) session_.reset();
      return;
    }
    if (!r.value()) {
      finish(acq, Outcome::kFail);
      return;
    }
    acq.token = *r.value();
    finish(acq, Outcome::kOk);
    const std::uint64_t token = acq.token;
    set_holding(write ? Holding::kBeforeWrite : Holding::kHeld);

    sleep_ms(pick_int(0, cfg_.ttl_ms / 5));
    // The writes happen even when the session was lost meanwhile (a paused
    // client does not know): the register and FENCE.PUT must refuse them.
    if (write) {
      Op reg;
      reg.process = cfg_.id;
      reg.session = session_->id();
      reg.inv = now_ns();
      reg.cmp2 = to_ns(session_->safe_deadline());
      (void)register_.write(name, token, reg);
      const std::string key = "f" + name.substr(1);
      Op put = base("fput", key);
      put.value = "p" + std::to_string(cfg_.id) + "-" + std::to_string(++counter_);
      put.aux = name;
      put.token = token;
      auto p = client_->fence_put(key, put.value, name, token);
      if (!p) put.aux += " " + p.status().to_string();
      finish(put, p ? Outcome::kOk : (is_unknown(p.status()) ? Outcome::kUnknown : Outcome::kFail));
      Op get = base("fget", key);
      auto g = client_->fence_get(key);
      if (g && g.value()) {
        get.value = g.value()->value;
        get.token = g.value()->token;
      }
      finish(get, g ? Outcome::kOk : Outcome::kUnknown);
      set_holding(Holding::kHeld);
    }
    Op hold = base("hold", name);
    hold.mode = acq.mode;
    hold.limit = limit;
    hold.token = token;
    hold.inv = acq.cmp;
    const std::int64_t release_sent = now_ns();
    const std::int64_t deadline = to_ns(session_->safe_deadline());
    hold.cmp = std::min(release_sent, deadline);
    hold.out = Outcome::kOk;
    history_->write(hold);

    Op rel = base("release", name);
    rel.inv = release_sent;
    rel.token = token;
    const std::uint64_t release_seq = ++seq_;
    Status st = client_->release(name, session_->id(), token, release_seq);
    if (!st && is_unknown(st) && !session_->lost()) {  // lost reply: the same SEQ again
      rel.aux = st.to_string();
      finish(rel, Outcome::kUnknown);
      rel.aux.clear();  // one logical release: the first invoke time is kept
      st = client_->release(name, session_->id(), token, release_seq);
      rel.aux = "seq-retry " + std::to_string(release_seq);
    }
    if (!st) rel.aux += (rel.aux.empty() ? "" : " ") + st.to_string();
    set_holding(Holding::kNone);
    finish(rel, st ? Outcome::kOk : (is_unknown(st) ? Outcome::kUnknown : Outcome::kFail));
    if (!st && (is_unknown(st) || st.code() == ErrorCode::kSessionExpired)) session_.reset();
  }

  // One raw command on the client's pool; replies as values, errors as Status.
  Result<resp::Value> call(const std::vector<std::string>& args) {
    client::detail::CallSpec spec;
    spec.deadline = Clock::now() + client_->options().call_timeout;
    spec.retry = client::detail::Retry::kIfNotSent;
    return client_->core().call(args, spec);
  }

  void compat_round(const std::string& key) {
    const int px = cfg_.ttl_ms;
    Op set = base("cset", key);
    set.session = 0;
    set.value = "p" + std::to_string(cfg_.id) + "-" + std::to_string(++counter_);
    set.limit = px;
    auto r = call({"SET", key, set.value, "NX", "PX", std::to_string(px), "TOKEN"});
    if (!r) {
      set.aux = r.status().to_string();
      finish(set, is_unknown(r.status()) ? Outcome::kUnknown : Outcome::kFail);
      return;
    }
    if (r->type != resp::Type::kInteger) {
      set.aux = r->str;
      finish(set, r->type == resp::Type::kNull ? Outcome::kFail : Outcome::kUnknown);
      return;
    }
    set.token = static_cast<std::uint64_t>(r->integer);
    finish(set, Outcome::kOk);
    set_holding(Holding::kHeld);
    sleep_ms(pick_int(0, px / 5));
    Op del = base("cdel", key);
    del.session = 0;
    del.value = set.value;
    auto d = call({"DELIFEQ", key, set.value});
    set_holding(Holding::kNone);
    if (!d || d->type != resp::Type::kInteger) {
      del.aux = d ? d->str : d.status().to_string();
      finish(del, Outcome::kUnknown);
      return;
    }
    finish(del, d->integer == 1 ? Outcome::kOk : Outcome::kFail);
  }

  const WorkerConfig cfg_;
  std::mt19937_64 rng_;
  std::shared_ptr<client::Client> client_;
  std::unique_ptr<HistoryWriter> history_;
  FencedRegister register_;
  int holding_fd_;
  std::unique_ptr<client::Session> session_;
  std::uint64_t seq_ = 0;
  std::uint64_t counter_ = 0;
};

}  // namespace

int run_worker(const WorkerConfig& config) {
  client::ClientOptions options;
  auto endpoints = client::parse_endpoints(config.endpoints);
  if (!endpoints) {
    std::fprintf(stderr, "worker: %s\n", endpoints.status().to_string().c_str());
    return 1;
  }
  options.endpoints = std::move(endpoints).value();
  options.connect_timeout = Millis(500);
  options.call_timeout = Millis(2000);
  options.name = "torture-" + std::to_string(config.id);
  auto c = client::Client::create(options);
  auto history = HistoryWriter::open(config.history);
  if (!c || !history) {
    std::fprintf(stderr, "worker: cannot start (%s)\n", (!c ? c.status() : history.status()).to_string().c_str());
    return 1;
  }
  Worker worker(config, std::move(c).value(), std::move(history).value());
  worker.run();
  return 0;
}

}  // namespace leasehold::torture
