// tools/lock_progress.h: what `leasehold lock` tells a person while it waits
// for a lock and when it gives up: who holds the lock, since when, with
// which token.
//
// describe_holders: "held by session 5 (owner 'x') since 12:01:33 (for
// 2m05s), token 7" (the longest hold first; "+2 more holders" for shared
// locks and semaphores), or "no holder now". Since is the local wall time,
// display only: the age comes from the server.
//
// WaitProgress: while alive, a thread asks the server about the lock
// (LOCK.INFO on its own pooled connection) and tells the person:
//   kTerminal: one progress line on stderr, redrawn every second (the first
//     time after 300 ms, so that a lock granted at once draws nothing) and
//     erased by stop();
//   kLog: a whole line on stderr every `interval` (the first after one
//     interval), "leasehold lock: waiting for lock 'x' (5.0s): held by ...",
//     so that cron and CI logs show who holds the lock;
//   kOff: nothing.
// stop() (or the destructor) ends the thread.
// Thread-safety: one WaitProgress is driven by one thread; the Client is
// shared (it is thread-safe).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "leasehold/client.h"

namespace leasehold::tools {

std::string describe_holders(const client::LockInfo& lock);

// The holders of `name` now, or why that is unknown ("no holder now",
// "holder unknown: <error>"), in the words of describe_holders.
std::string describe_holders_now(client::Client& client, const std::string& name);

enum class ProgressStyle { kOff, kTerminal, kLog };

// kTerminal when stderr is a terminal, else kLog (`--progress`, the
// default), or kOff (`--no-progress`).
ProgressStyle progress_style(bool wanted);

class WaitProgress {
 public:
  WaitProgress(std::shared_ptr<client::Client> client, std::string name, ProgressStyle style,
               client::Millis interval = client::Millis(5000));
  ~WaitProgress();
  WaitProgress(const WaitProgress&) = delete;
  WaitProgress& operator=(const WaitProgress&) = delete;

  // True while the thread runs (style is not kOff).
  bool active() const { return thread_.joinable(); }
  void stop();

 private:
  void run();

  std::shared_ptr<client::Client> client_;
  std::string name_;
  ProgressStyle style_;
  client::Millis interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leasehold::tools
