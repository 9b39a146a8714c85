// server/net/read_budget.h: how much of one event-loop turn goes to parsing and
// starting client requests, and the connections whose requests wait for a
// later turn (in arrival order).
//
// Why: with 1,000 clients ready at once, one turn used to parse, start and
// answer all of their requests (~15 us each): a 15-40 ms turn in which no
// timer fired, no commit completion was taken and no new connection was
// accepted. With a budget, a turn serves reads until the time charged to
// serving them (Meter: parsing, starting requests and writing the replies
// that are ready at once, measured with uv_hrtime) reaches `budget`; the
// connections read after that keep their bytes unparsed, stop reading (so
// a client that keeps sending meets TCP back-pressure, and nothing it sends
// is lost) and queue here. Later turns resume them in FIFO order before
// anyone new is served: a connection read while others wait queues behind
// them, and one whose slice ran out mid-buffer queues again at the back.
// A client's request waits about as long as it would have in one long
// turn; the loop stays responsive meanwhile.
//
// Only serving reads is charged: applying committed batches has its own
// budget (--apply-step-us, node/), so a turn that applies a 2 ms step still
// serves 2 ms of reads, and a small request (a PING) behind pipelining
// clients waits for their slices, not for one slice per turn.
//
// Progress: each turn resumes at least one waiting connection and each
// resumed connection parses at least one request, spent budget or not.
// While connections wait, the idle handle keeps poll from blocking.
//
// Off when the budget is 0 (spent() and waiting() are always false): every
// read is parsed at once, as before.
//
// Use: open() with the loop, new_turn() from the prepare handle (right
// before poll), a Meter around the work of serving a read, spent() and
// defer() from connections, close() at shutdown (then defer() refuses:
// parse at once).
// Ownership: holds weak references to connections. Thread-safety: loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>

namespace leasehold::server {

// What waits in the budget's queue: a Connection (server/net/connection.h).
class BudgetWaiter {
 public:
  // A closed waiter is skipped.
  virtual bool closed() const = 0;
  // Parses what waited for the budget, starts it and reads again.
  virtual void resume_parsing() = 0;

 protected:
  ~BudgetWaiter() = default;
};

class ReadBudget {
 public:
  struct Stats {
    std::uint64_t deferred = 0;  // times a connection's requests waited for a later turn
    std::uint64_t waiting = 0;   // connections waiting now
  };

  explicit ReadBudget(std::chrono::nanoseconds budget) : budget_ns_(static_cast<std::uint64_t>(budget.count())) {}
  ReadBudget(const ReadBudget&) = delete;
  ReadBudget& operator=(const ReadBudget&) = delete;

  // Opens the idle handle on `loop` (the object must not move afterwards).
  void open(uv_loop_t* loop);
  // Closes the idle handle and forgets the waiting connections; defer()
  // refuses from now on. Idempotent.
  void close();

  // Charges the time from its construction to its destruction to this
  // turn. Nested meters charge once (the outermost).
  class Meter {
   public:
    explicit Meter(ReadBudget& budget);
    ~Meter();
    Meter(const Meter&) = delete;
    Meter& operator=(const Meter&) = delete;

   private:
    ReadBudget* budget_;  // null when nested or the budget is off
  };

  // A new turn begins after the coming poll (the prepare handle).
  void new_turn() { charged_ns_ = 0; }
  // True when this turn has charged the budget or more (a running Meter counts).
  bool spent() const;
  // True when connections wait: a newly read connection must queue behind them.
  bool waiting() const { return !queue_.empty(); }
  // Queues `connection` to be resumed (BudgetWaiter::resume_parsing) in a
  // later turn. False (nothing queued) when the budget is off or closed:
  // parse now.
  bool defer(std::weak_ptr<BudgetWaiter> connection);

  Stats stats() const { return Stats{deferred_, queue_.size()}; }

 private:
  void run();  // idle callback: resumes waiting connections

  std::uint64_t budget_ns_;
  uv_idle_t idle_{};
  bool open_ = false;
  bool idle_active_ = false;
  std::uint64_t charged_ns_ = 0;      // this turn's charged time, closed meters
  std::uint64_t meter_start_ns_ = 0;  // uv_hrtime() when the running meter began; 0 = none
  std::deque<std::weak_ptr<BudgetWaiter>> queue_;
  std::uint64_t deferred_ = 0;
};

}  // namespace leasehold::server
