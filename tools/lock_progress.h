// tools/lock_progress.h: what `leasehold lock` tells a person while it waits
// for a lock and when it gives up: who holds the lock, since when, with
// which token.
//
// describe_holders: "held by session 5 (owner 'x') since 12:01:33 (for
// 2m05s), token 7" (the longest hold first; "+2 more holders" for shared
// locks and semaphores), or "no holder now". Since is the local wall time,
// display only: the age comes from the server.
//
// WaitProgress: while alive, and only when stderr is a terminal, a thread
// asks the server about the lock every second (LOCK.INFO on its own pooled
// connection; the first time after 300 ms, so that a lock granted at once
// draws nothing) and redraws one progress line on stderr; stop() (or the
// destructor) ends the thread and erases the line. When stderr is not a
// terminal it does nothing at all.
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

class WaitProgress {
 public:
  WaitProgress(std::shared_ptr<client::Client> client, std::string name);
  ~WaitProgress();
  WaitProgress(const WaitProgress&) = delete;
  WaitProgress& operator=(const WaitProgress&) = delete;

  // True when a progress line is being drawn (stderr is a terminal).
  bool active() const { return thread_.joinable(); }
  void stop();

 private:
  void run();

  std::shared_ptr<client::Client> client_;
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leasehold::tools
