// tests/fuzz/net_frames.h: request frames for the network fuzzer
// (net_fuzzer.cc): valid frames from the real command set, mutations of
// them, and the guard that keeps the canary untouchable.
//
// FrameGen draws commands from every family (connection, session, lock,
// fence, compat) with arguments from small vocabularies, so that commands
// meet each other (a write, then a read of it, a wait for a held lock).
// Waits carry short deadlines (WAIT 1..40 ms) unless the caller asks for an
// endless one. mutate() damages a frame the way a hostile or broken client
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

  // One valid request as argument words.
  std::vector<std::string> command();
  // LOCK.ACQUIRE on a lock name with no deadline (WAIT 0): blocks while held.
  std::vector<std::string> endless_wait(const std::string& lock, std::uint64_t session);
  // The frame of `args` (RESP array of bulk strings, or sometimes an inline line).
  std::string frame(const std::vector<std::string>& args);
  std::string mutate(std::string frame);

 private:
  std::string session_arg();
  std::string token_arg();
  std::string lock_name();
  std::string key_name();
  std::string small_value();

  std::mt19937_64 rng_;
  std::vector<std::uint64_t> sessions_;
  std::uint64_t token_hint_ = 1;
};

bool touches_protected(const std::string& stream, const Protected& p);

}  // namespace leasehold::testing
