// tests/core/core_test_util.h: a small harness around StateMachine for the
// core unit tests: command builders and "error changes nothing" checks.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/state_machine.h"

namespace leasehold::core::testing {

inline Acquire acq(std::string lock, SessionId s, LockMode mode = LockMode::kExclusive,
                   bool wait = false, std::uint64_t wait_ms = 0, std::uint64_t delay_ms = 0,
                   std::uint32_t limit = 1) {
  Acquire a;
  a.lock = std::move(lock);
  a.session = s;
  a.mode = mode;
  a.wait = wait;
  a.wait_ms = wait_ms;
  a.delay_ms = delay_ms;
  a.limit = limit;
  return a;
}

inline Acquire sem(std::string lock, SessionId s, std::uint32_t limit, bool wait = false) {
  return acq(std::move(lock), s, LockMode::kSemaphore, wait, 0, 0, limit);
}

template <typename T>
std::vector<T> effects_of(const ApplyResult& r) {
  std::vector<T> out;
  for (const Effect& e : r.effects) {
    if (const T* t = std::get_if<T>(&e)) out.push_back(*t);
  }
  return out;
}

class Harness {
 public:
  explicit Harness(Limits limits = {}) : sm(limits) {}

  ApplyResult run(CommandBody body, SessionId session = 0, std::uint64_t seq = 0) {
    Command c;
    c.now = now;
    c.session = session;
    c.seq = seq;
    c.body = std::move(body);
    return sm.apply(c);
  }

  SessionId open(std::uint64_t ttl_ms = 10'000, std::string owner = "owner") {
    ApplyResult r = run(OpenSession{ttl_ms, std::move(owner)});
    EXPECT_FALSE(r.reply.is_error()) << r.reply.error.to_string();
    return r.reply.session;
  }

  // Acquire that must be granted now; returns the token.
  Token grant(Acquire a) {
    ApplyResult r = run(std::move(a));
    EXPECT_EQ(r.reply.code, ReplyCode::kOk) << r.reply.error.to_string();
    EXPECT_NE(r.reply.token, 0U);
    return r.reply.token;
  }

  // Acquire with wait that must queue.
  void queue(Acquire a, std::uint64_t seq = 0) {
    a.wait = true;
    const SessionId s = a.session;
    ApplyResult r = run(std::move(a), seq == 0 ? 0 : s, seq);
    EXPECT_EQ(r.reply.code, ReplyCode::kQueued) << r.reply.error.to_string();
  }

  // Applies `body`, expects an error with `code`, no effects, and no change at
  // all (snapshot bytes and revision equal before and after).
  void expect_error(CommandBody body, ErrorCode code, SessionId session = 0, std::uint64_t seq = 0) {
    const std::string before = sm.snapshot();
    const Revision rev = sm.revision();
    ApplyResult r = run(std::move(body), session, seq);
    ASSERT_TRUE(r.reply.is_error()) << "expected " << error_code_name(code);
    EXPECT_EQ(r.reply.error.code(), code) << r.reply.error.to_string();
    EXPECT_FALSE(r.reply.error.message().empty());
    EXPECT_TRUE(r.effects.empty());
    EXPECT_EQ(sm.revision(), rev);
    EXPECT_EQ(sm.snapshot(), before) << "state changed on error " << r.reply.error.to_string();
  }

  StateMachine sm;
  LogMillis now = 1'000;
};

}  // namespace leasehold::core::testing
