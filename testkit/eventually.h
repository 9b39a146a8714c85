// testkit/eventually.h: polling under a deadline (never sleeps as
// synchronisation) and the one time scale for every bound in the tests.
//
// time_scale(): LEASEHOLD_TEST_TIME_SCALE from the environment, a number
// from 1 to 100 (e.g. "3" or "1.5"), default 1; anything else counts as 1,
// so it never makes a test stricter. Read once per process. Raise it on a
// slow or very busy machine: every bound that goes through scaled() or
// eventually() grows with it.
//
// scaled(d): d * time_scale(), as milliseconds (rounded up).
//
// eventually(predicate, timeout): calls predicate() every `poll` (default
// 10 ms) until it returns true (-> true) or scaled(timeout) has passed
// (-> false, after one last call at the deadline). The predicate runs on
// the calling thread.
//
// eventually_value(poll, timeout): the same loop for a poll() that returns
// something testable as a bool (a std::optional, a Result, a pointer):
// returns the first value that tests true, or the value of the last call
// at the deadline (which tests false) once scaled(timeout) has passed.
//
// ScaledDeadline(timeout): a deadline scaled(timeout) from its construction,
// for loops whose body itself blocks with a timeout (a read, a wait for a
// reply): left() is the time remaining (never negative), passed() whether
// it has passed.
//
// Use them for waits on something the test cannot be told about directly
// ("the server sees the session", "the lease was renewed"). Upper bounds
// on how long something may take also go through scaled(); lower bounds
// ("not before the TTL") must NOT be scaled.
// Thread-safety: all functions are safe from any thread.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace leasehold::testing {

inline double time_scale() {
  static const double scale = [] {
    const char* text = std::getenv("LEASEHOLD_TEST_TIME_SCALE");
    if (text == nullptr || *text == '\0') return 1.0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(value) || value < 1.0 || value > 100.0) return 1.0;
    return value;
  }();
  return scale;
}

template <typename Rep, typename Period>
std::chrono::milliseconds scaled(std::chrono::duration<Rep, Period> d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count() * time_scale();
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(std::ceil(ms)));
}

template <typename Predicate, typename Rep, typename Period>
bool eventually(Predicate&& predicate, std::chrono::duration<Rep, Period> timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(poll);  // deliberate: the poll interval of the helper every wait goes through
  }
  return static_cast<bool>(predicate());
}

template <typename Poll, typename Rep, typename Period>
auto eventually_value(Poll&& poll, std::chrono::duration<Rep, Period> timeout,
                      std::chrono::milliseconds interval = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    auto value = poll();
    if (static_cast<bool>(value)) return value;
    std::this_thread::sleep_for(interval);  // deliberate: the poll interval of the helper
  }
  return poll();
}

class ScaledDeadline {
 public:
  template <typename Rep, typename Period>
  explicit ScaledDeadline(std::chrono::duration<Rep, Period> timeout)
      : at_(std::chrono::steady_clock::now() + scaled(timeout)) {}

  std::chrono::steady_clock::time_point at() const { return at_; }
  bool passed() const { return std::chrono::steady_clock::now() >= at_; }
  std::chrono::milliseconds left() const {
    const auto rest = std::chrono::ceil<std::chrono::milliseconds>(at_ - std::chrono::steady_clock::now());
    return rest > std::chrono::milliseconds(0) ? rest : std::chrono::milliseconds(0);
  }

 private:
  std::chrono::steady_clock::time_point at_;
};

}  // namespace leasehold::testing
