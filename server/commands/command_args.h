// server/commands/command_args.h: the argument parsing of the write commands, as pure
// functions from the request's words to the core command the handler
// proposes. The handlers (commands_*.cc) call these, and so does
// fuzz/command_args_fuzzer.cc, which needs no live server.
//
// `args[0]` is the command name; the caller has checked the arity against
// the command table. Errors: kInvalidArgument whose message is the wire
// error without its "ERR " prefix (server/base/args.h error_text() adds it), e.g.
// "session is not an integer or out of range (1 to 18446744073709551615)"
// or "syntax error: ...".
//
// Every number is range-checked here, before any arithmetic or unit
// conversion (docs/protocol.md, "Numeric arguments"): a duration is at most
// kMaxWireDurationMs, and a TTL at most core::kMaxSessionTtlMs; core then
// applies the configured limits (max_wait_ms, max_delay_ms, max_ttl_ms). A
// LEASE or LOCK.EXTEND ms is at most core::kMaxSessionTtlMs (the handler
// applies --max-hold).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/command.h"
#include "leasehold/status.h"
#include "server/base/wire_ceilings.h"  // kMaxWireDurationMs

namespace leasehold::server {

using Args = std::vector<std::string>;

// PEXPIRE's milliseconds: at most the longest session TTL (core applies the
// configured --max-ttl-ms); 0 or less deletes the key, as in Redis.
Result<std::int64_t> parse_pexpire_ms(const std::string& text);

Result<core::Command> parse_session_open(const Args& args);    // SESSION.OPEN ttl_ms [OWNER label] [ONCLOSE grace_ms] [REQID r]
Result<core::Command> parse_lock_acquire(const Args& args);    // LOCK.ACQUIRE name session [options]
Result<core::Command> parse_lock_release(const Args& args);    // LOCK.RELEASE name session token [SEQ n]
Result<core::Command> parse_fence_put(const Args& args);       // FENCE.PUT key value lock token
Result<core::Command> parse_lock_extend(const Args& args);     // LOCK.EXTEND name session token ms
Result<core::Command> parse_lock_transfer(const Args& args);   // LOCK.TRANSFER name from token to

struct CompatSetArgs {
  core::Command command;    // a CompatSet
  bool want_token = false;  // TOKEN: reply with the grant's token instead of +OK
};
// SET key value [NX | XX] (PX ms | EX s) [GET] [TOKEN]: the expiry is
// required; without it the error is kCompatSetNeedsExpiry.
Result<CompatSetArgs> parse_compat_set(const Args& args);
inline constexpr std::string_view kCompatSetNeedsExpiry =
    "SET on leasehold needs PX (milliseconds) or EX (seconds): a lock without expiry would never be freed";

// The parser of a write command that maps to exactly one core command (the
// five above, and SESSION.CLOSE / SESSION.KILL / LOCK.REVOKE / LOCK.CANCEL /
// DELIFEQ), by upper-case name; nullptr for any other command.
using WriteParser = Result<core::Command> (*)(const Args& args);
WriteParser find_write_parser(std::string_view upper_name);

}  // namespace leasehold::server
