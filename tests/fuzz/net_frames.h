// tests/fuzz/net_frames.h: request frames for the network fuzzer
// (net_fuzzer.cc): valid frames from the real command set, mutations of
// them, and the guard that keeps the canary untouchable.
//
// FrameGen draws commands from every family (connection, session, lock,
// fence, compat) with arguments from small vocabularies, so that commands
// meet each other (a write, then a read of it, a wait for a held lock).
// Waits carry short deadlines (WAIT 1..40 ms) unless the caller asks for an
// endless one.
//
// Extreme-numbers mode (set_extreme_numbers; docs/fuzzing.md): every
// numeric argument (TTL, session id, token, WAIT, DELAY, LIMIT, SEQ, COUNT,
// AFTER, PX, EX, PEXPIRE's ms, HELLO's version) is, half the time, an
// extreme instead: a seed from the corpus file (fuzz/corpus/net/
// extreme-numbers.txt: 0, -1, INT64_MAX, INT64_MIN, 2^63, 2^64, the wire
// ceilings and their neighbours...), a random 63-bit value, a negative one,
// a random 64-bit one, or a decimal string of 20 to 400 digits. A WAIT may
// then be long or endless (WAIT 0): is_endless_wait() tells the caller. mutate() damages a frame the way a hostile or broken client
// would: flipped, dropped, inserted or duplicated bytes, a wrong length
// header, a truncation.
//
// touches_protected() parses a byte stream exactly as the server will
// (resp::Parser in request mode, the default limits the fuzzer's server
// runs with) and reports whether any request in it names
// a protected lock, or ends (SESSION.CLOSE / SESSION.KILL) a protected
// session id (numerically, so "007" counts); the fuzzer drops such a stream,
// so that only the checks' own commands can reach the canary.
//
// Thread-safety: one owner per object.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace leasehold::testing {

struct Protected {
  std::set<std::uint64_t> sessions;
  std::set<std::string> locks;
};

class FrameGen {
 public:
  explicit FrameGen(std::uint64_t seed) : rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool chance(unsigned percent) { return below(100) < percent; }

  // Session ids and tokens the frames draw from (live ones make commands succeed).
  void set_sessions(std::vector<std::uint64_t> ids) { sessions_ = std::move(ids); }
  void set_token_hint(std::uint64_t t) { token_hint_ = t; }
  // Turns on extreme-numbers mode with these seed values (one per element).
  void set_extreme_numbers(std::vector<std::string> seeds) {
    extreme_seeds_ = std::move(seeds);
    extreme_ = true;
  }
  bool extreme() const { return extreme_; }
  std::uint64_t extreme_numbers_sent() const { return extreme_sent_; }

  // One valid request as argument words.
  std::vector<std::string> command();
  // LOCK.ACQUIRE on a lock name with no deadline (WAIT 0): blocks while held.
  std::vector<std::string> endless_wait(const std::string& lock, std::uint64_t session);
  // The frame of `args` (RESP array of bulk strings, or sometimes an inline line).
  std::string frame(const std::vector<std::string>& args);
  std::string mutate(std::string frame);

 private:
  // `usual` as text, or (in extreme-numbers mode, half the time) an extreme.
  std::string number(std::uint64_t usual);
  std::string extreme_number();
  std::string session_arg();
  std::string token_arg();
  std::string lock_name();
  std::string key_name();
  std::string small_value();

  std::mt19937_64 rng_;
  std::vector<std::uint64_t> sessions_;
  std::uint64_t token_hint_ = 1;
  bool extreme_ = false;
  std::vector<std::string> extreme_seeds_;
  std::uint64_t extreme_sent_ = 0;
};

// A LOCK.ACQUIRE whose WAIT has no deadline (WAIT 0, 00, ...): it blocks for
// as long as the lock is held, so a pipeline that must be answered skips it.
bool is_endless_wait(const std::vector<std::string>& args);

// The seeds of extreme-numbers mode: the non-empty lines of `path` that are
// not comments (#). Empty when the file cannot be read.
std::vector<std::string> read_number_seeds(const std::string& path);

bool touches_protected(const std::string& stream, const Protected& p);

}  // namespace leasehold::testing
