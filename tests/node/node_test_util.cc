#include "tests/node/node_test_util.h"

#include <gtest/gtest.h>

#include <thread>

#include "log/rocksdb_log.h"
#include "testkit/eventually.h"

namespace leasehold::node::testing {

Executor TestExecutor::executor() {
  return [this](std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
  };
}

bool TestExecutor::run_one(std::chrono::milliseconds wait) {
  std::function<void()> task;
  {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, wait, [this] { return !tasks_.empty(); })) return false;
    task = std::move(tasks_.front());
    tasks_.pop_front();
  }
  task();
  return true;
}

bool TestExecutor::run_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const leasehold::testing::ScaledDeadline deadline(timeout);
  while (!pred()) {
    if (deadline.passed()) return false;
    run_one(std::min<std::chrono::milliseconds>(std::chrono::milliseconds(10), deadline.left()));
  }
  return true;
}

void TestExecutor::run_for(std::chrono::milliseconds duration) {
  // Deliberate: a window in which something must NOT happen, so a lower
  // bound, not scaled; the tasks posted meanwhile run.
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) run_one(std::chrono::milliseconds(5));
}

namespace {

// Takes the held calls under the lock and runs them outside it.
void pass_on(std::mutex& mu, std::vector<std::function<void()>>& held) {
  std::vector<std::function<void()>> pass;
  {
    std::lock_guard lock(mu);
    pass.swap(held);
  }
  for (auto& f : pass) f();
}

}  // namespace

void LogControl::set_hold(bool on) {
  std::lock_guard lock(mu);
  hold = on;
}

void LogControl::release() { pass_on(mu, held); }

void LogControl::set_hold_snapshots(bool on) {
  std::lock_guard lock(mu);
  hold_snapshots = on;
}

void LogControl::release_snapshots() { pass_on(mu, held_snapshots); }

std::size_t LogControl::held_snapshot_count() {
  std::lock_guard lock(mu);
  return held_snapshots.size();
}

int LogControl::append_count() {
  std::lock_guard lock(mu);
  return appends;
}

std::size_t LogControl::held_count() {
  std::lock_guard lock(mu);
  return held.size();
}

namespace {

class ControlledLog final : public log::Log {
 public:
  ControlledLog(std::unique_ptr<log::Log> inner, std::shared_ptr<LogControl> control)
      : inner_(std::move(inner)), control_(std::move(control)) {}

  void append(std::string batch, AppendDone done) override {
    std::optional<Status> fail;
    {
      std::lock_guard lock(control_->mu);
      ++control_->appends;
      fail.swap(control_->fail_next);
      if (!fail && control_->hold) {
        control_->held.push_back([inner = inner_.get(), batch = std::move(batch), done = std::move(done)]() mutable {
          inner->append(std::move(batch), std::move(done));
        });
        return;
      }
    }
    if (fail) {
      // Deliver the injected failure from another thread, like the real log.
      std::thread([done = std::move(done), st = *fail] { done(st); }).detach();
      return;
    }
    inner_->append(std::move(batch), std::move(done));
  }
  Status read(log::LogIndex from, const Visitor& visit) override { return inner_->read(from, visit); }
  void save_snapshot(log::LogIndex index, std::string bytes, StatusDone done) override {
    {
      std::lock_guard lock(control_->mu);
      if (control_->hold_snapshots) {
        control_->held_snapshots.push_back(
            [inner = inner_.get(), index, bytes = std::move(bytes), done = std::move(done)]() mutable {
              inner->save_snapshot(index, std::move(bytes), std::move(done));
            });
        return;
      }
    }
    inner_->save_snapshot(index, std::move(bytes), std::move(done));
  }
  Result<std::optional<log::Snapshot>> load_snapshot() override { return inner_->load_snapshot(); }
  log::Position position() const override { return inner_->position(); }
  std::string describe() const override { return "controlled " + inner_->describe(); }

 private:
  std::unique_ptr<log::Log> inner_;
  std::shared_ptr<LogControl> control_;
};

}  // namespace

std::unique_ptr<log::Log> controlled(std::unique_ptr<log::Log> inner, std::shared_ptr<LogControl> control) {
  return std::make_unique<ControlledLog>(std::move(inner), std::move(control));
}

NodeHarness::NodeHarness(NodeOptions options) : options_(std::move(options)) {}

NodeHarness::~NodeHarness() {
  if (node_) close();
}

void NodeHarness::open() {
  auto log = log::open_rocksdb_log({.dir = dir_.path() + "/log"});
  ASSERT_TRUE(log.is_ok()) << log.status().to_string();
  auto node = Node::open(options_, controlled(std::move(log.value()), control_), clock_, loop_.executor());
  ASSERT_TRUE(node.is_ok()) << node.status().to_string();
  node_ = std::move(node.value());
  node_->set_effect_listener([this](const core::Effect& e) { effects_.push_back(e); });
}

void NodeHarness::close() {
  control_->set_hold(false);
  control_->set_hold_snapshots(false);
  control_->release_snapshots();
  control_->release();
  bool done = false;
  node_->shutdown([&done] { done = true; });
  EXPECT_TRUE(loop_.run_until([&done] { return done; }));
  node_.reset();
}

core::ApplyResult NodeHarness::commit(core::CommandBody body, core::SessionId session, std::uint64_t seq) {
  std::optional<core::ApplyResult> result;
  core::Command command;
  command.session = session;
  command.seq = seq;
  command.body = std::move(body);
  node_->propose(std::move(command), [&result](const core::ApplyResult& r) { result = r; });
  EXPECT_TRUE(loop_.run_until([&result] { return result.has_value(); })) << "no reply";
  return result.value_or(core::ApplyResult{core::Reply::fail(ErrorCode::kTimedOut, "no reply"), {}});
}

void NodeHarness::fire_due_timers() {
  node_->run_due_timers();
  EXPECT_TRUE(loop_.run_until([this] { return node_->stats().pending_proposals == 0; }))
      << "proposals from the timers still pending";
}

core::Command open_session_command(std::uint64_t ttl_ms, const std::string& owner) {
  core::Command c;
  c.body = core::OpenSession{ttl_ms, owner};
  return c;
}

core::SessionId NodeHarness::open_session(std::uint64_t ttl_ms, const std::string& owner) {
  core::ApplyResult r = commit(core::OpenSession{ttl_ms, owner});
  EXPECT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
  return r.reply.session;
}

}  // namespace leasehold::node::testing
