// fuzz/fuzz_support.h: checks shared by the libFuzzer targets.
//
// FUZZ_CHECK() aborts on a broken property, which libFuzzer reports as a crash
// (with the input saved). apply_checked() runs decoded commands through a
// real core::StateMachine and checks the fencing promise on the way: a grant's
// token is the revision of the command that caused it, it is above every
// token the lock had before, and the revision never goes backwards.
//
// Thread-safety: plain functions; libFuzzer runs one input at a time.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/command_codec.h"
#include "core/state_machine.h"

namespace leasehold::fuzz {

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace leasehold::fuzz

// FUZZ_CHECK(cond): aborts with the condition's text and place when false.
#define FUZZ_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::leasehold::fuzz::check_failed(#cond, __FILE__, __LINE__))

namespace leasehold::fuzz {

// Re-encoding decoded commands is stable: encode(decode(encode(c))) == encode(c).
inline void check_codec_round_trip(const std::vector<core::Command>& commands) {
  const std::string once = core::encode_batch(commands);
  auto again = core::decode_batch(once);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(core::encode_batch(*again) == once);
}

inline void apply_checked(core::StateMachine& sm, const core::Command& command) {
  const core::Revision before = sm.revision();
  const core::ApplyResult r = sm.apply(command);
  FUZZ_CHECK(sm.revision() >= before);
  if (r.reply.is_error()) FUZZ_CHECK(sm.revision() == before && r.effects.empty());
  for (const core::Effect& e : r.effects) {
    if (const auto* g = std::get_if<core::Granted>(&e)) {
      FUZZ_CHECK(g->token > before && g->token <= sm.revision());
      const auto lock = sm.lock(g->lock);
      FUZZ_CHECK(lock.has_value() && lock->last_token >= g->token);
    }
  }
  // A grant in the reply (LOCK.ACQUIRE, SET) carries this command's revision.
  const bool grants = std::holds_alternative<core::Acquire>(command.body) ||
                      std::holds_alternative<core::CompatSet>(command.body);
  if (grants && r.reply.code == core::ReplyCode::kOk && sm.revision() > before) {
    FUZZ_CHECK(r.reply.token == sm.revision());
  }
}

// The snapshot of `sm` restores, and restoring is canonical (same bytes again).
inline void check_snapshot_round_trip(const core::StateMachine& sm) {
  const std::string bytes = sm.snapshot();
  auto restored = core::StateMachine::restore(bytes, sm.limits());
  if (!restored) std::fprintf(stderr, "restore: %s\n", restored.status().to_string().c_str());
  FUZZ_CHECK(restored.is_ok());
  FUZZ_CHECK(restored->snapshot() == bytes);
}

}  // namespace leasehold::fuzz
