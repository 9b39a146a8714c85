// torture/faults/clock_wait_shim.cc: an LD_PRELOAD library loaded ahead of
// libfaketime for the torture suite's `rate:X` clock mode (torture/run.h).
//
// Why: libfaketime 0.9.10 (Debian 12) with FAKETIME="+0 xRATE" moves the
// faked CLOCK_MONOTONIC onto the epoch (about 1.8e9 s) but does not
// intercept pthread_cond_clockwait, which libstdc++ uses for every
// std::condition_variable wait_for/wait_until on steady_clock. The kernel
// then waits until the real monotonic clock reaches a faked deadline:
// forever. (A cluster node's etcd keepalive waits so, and lost its lease.)
//
// What: pthread_cond_clockwait(cond, mutex, clock, abstime) turns the
// faked deadline into a real one: the time left on the faked clock
// (clock_gettime, which libfaketime answers), divided by the rate of
// FAKETIME's "xRATE" (1 if none), added to the real clock (the system call
// itself), then waits with glibc's function. Other calls are untouched.
// Thread-safe (no state besides the rate, read once).
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

using ClockWait = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);

std::int64_t ns(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

double fake_rate() {
  const char* spec = std::getenv("FAKETIME");
  const char* x = spec != nullptr ? std::strchr(spec, 'x') : nullptr;
  const double rate = x != nullptr ? std::strtod(x + 1, nullptr) : 1.0;
  return rate > 0 ? rate : 1.0;
}

}  // namespace

extern "C" int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                      const timespec* abstime) {
  static const auto next = reinterpret_cast<ClockWait>(dlsym(RTLD_NEXT, "pthread_cond_clockwait"));
  static const double rate = fake_rate();
  timespec fake_now{};
  timespec real_now{};
  clock_gettime(clock, &fake_now);
  syscall(SYS_clock_gettime, clock, &real_now);
  std::int64_t left = ns(*abstime) - ns(fake_now);
  if (left < 0) left = 0;
  const std::int64_t real_deadline = ns(real_now) + static_cast<std::int64_t>(static_cast<double>(left) / rate);
  const timespec real_abstime{static_cast<time_t>(real_deadline / 1'000'000'000),
                              static_cast<long>(real_deadline % 1'000'000'000)};
  return next(cond, mutex, clock, &real_abstime);
}
