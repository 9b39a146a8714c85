// server/commands/command_args.cc: argument parsing of the write commands (see command_args.h).
#include "server/commands/command_args.h"

#include <cstdint>

#include <fmt/format.h>

#include "server/base/args.h"

namespace leasehold::server {
namespace {

Status syntax(std::string_view detail) {
  return Status(ErrorCode::kInvalidArgument, "syntax error: " + std::string(detail));
}

core::Command with_body(core::CommandBody body, core::SessionId session = 0, std::uint64_t seq = 0) {
  core::Command cmd;
  cmd.session = session;
  cmd.seq = seq;
  cmd.body = std::move(body);
  return cmd;
}

Result<core::SessionId> session_at(const Args& args, std::size_t index) {
  return parse_uint(args[index], "session", 1, UINT64_MAX);
}

// The options after `LOCK.ACQUIRE name session`.
Status parse_acquire_options(const Args& args, core::Acquire& a, std::uint64_t& seq) {
  bool shared = false;
  bool limited = false;
  for (std::size_t i = 3; i < args.size(); ++i) {
    const std::string& opt = args[i];
    if (iequals(opt, "SHARED")) {
      shared = true;
      continue;
    }
    if (!(iequals(opt, "LIMIT") || iequals(opt, "WAIT") || iequals(opt, "DELAY") || iequals(opt, "SEQ") ||
          iequals(opt, "LEASE"))) {
      return syntax(fmt::format("unknown option '{}'", opt.substr(0, 32)));
    }
    if (i + 1 >= args.size()) return syntax(fmt::format("{} needs a value", to_upper(opt)));
    const std::string& value = args[++i];
    if (iequals(opt, "LIMIT")) {
      auto n = parse_uint(value, "LIMIT", 1, UINT32_MAX);
      if (!n) return n.status();
      a.limit = static_cast<std::uint32_t>(*n);
      limited = true;
    } else if (iequals(opt, "WAIT")) {
      auto n = parse_uint(value, "WAIT", 0, kMaxWireDurationMs);
      if (!n) return n.status();
      a.wait = true;
      a.wait_ms = *n;
    } else if (iequals(opt, "DELAY")) {
      auto n = parse_uint(value, "DELAY", 0, kMaxWireDurationMs);
      if (!n) return n.status();
      a.delay_ms = *n;
    } else if (iequals(opt, "LEASE")) {
      auto n = parse_uint(value, "LEASE", 1, core::kMaxSessionTtlMs);
      if (!n) return n.status();
      a.lease_ms = *n;
    } else {
      auto n = parse_uint(value, "SEQ", 1, INT64_MAX);
      if (!n) return n.status();
      seq = *n;
    }
  }
  if (shared && limited) return syntax("SHARED and LIMIT exclude each other");
  a.mode = shared ? core::LockMode::kShared : limited ? core::LockMode::kSemaphore : core::LockMode::kExclusive;
  return Status::ok();
}

Result<core::Command> parse_session_end(const Args& args, bool kill) {
  auto id = session_at(args, 1);
  if (!id) return id.status();
  if (kill) return with_body(core::KillSession{*id});
  return with_body(core::CloseSession{*id});
}

Result<core::Command> parse_session_close(const Args& args) { return parse_session_end(args, false); }
Result<core::Command> parse_session_kill(const Args& args) { return parse_session_end(args, true); }
Result<core::Command> parse_lock_revoke(const Args& args) { return with_body(core::Revoke{args[1]}); }

Result<core::Command> parse_lock_cancel(const Args& args) {
  auto id = session_at(args, 2);
  if (!id) return id.status();
  return with_body(core::CancelWait{args[1], *id});
}

Result<core::Command> parse_delifeq(const Args& args) {
  return with_body(core::CompatDelete{args[1], args[2]});
}

Result<core::Command> parse_set_command(const Args& args) {
  auto set = parse_compat_set(args);
  if (!set) return set.status();
  return std::move(set->command);
}

}  // namespace

Result<core::Command> parse_session_open(const Args& args) {
  // 0 parses: the state machine refuses it naming the allowed TTL range
  // (the configured one, within this).
  auto ttl = parse_uint(args[1], "ttl_ms", 0, core::kMaxSessionTtlMs);
  if (!ttl) return ttl.status();
  core::OpenSession body;
  body.ttl_ms = *ttl;
  // Options in any order, each at most once; the state machine checks the
  // REQID's length and bytes and the grace against the TTL.
  bool owner = false;
  for (std::size_t i = 2; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return syntax("want SESSION.OPEN ttl_ms [OWNER label] [ONCLOSE grace_ms] [REQID r]");
    if (iequals(args[i], "OWNER") && !owner) {
      body.owner = args[i + 1];
      owner = true;
    } else if (iequals(args[i], "ONCLOSE") && !body.close_grace_ms) {
      auto grace = parse_uint(args[i + 1], "grace_ms", 0, core::kMaxSessionTtlMs);
      if (!grace) return grace.status();
      body.close_grace_ms = static_cast<std::uint32_t>(*grace);
    } else if (iequals(args[i], "REQID") && body.reqid.empty()) {
      if (args[i + 1].empty()) return syntax("REQID must not be empty");
      body.reqid = args[i + 1];
    } else {
      return syntax("want SESSION.OPEN ttl_ms [OWNER label] [ONCLOSE grace_ms] [REQID r] (each at most once)");
    }
  }
  return with_body(std::move(body));
}

Result<core::Command> parse_lock_acquire(const Args& args) {
  auto session = session_at(args, 2);
  if (!session) return session.status();
  core::Acquire a;
  a.lock = args[1];
  a.session = *session;
  std::uint64_t seq = 0;
  if (Status st = parse_acquire_options(args, a, seq); !st) return st;
  return with_body(std::move(a), *session, seq);
}

Result<core::Command> parse_lock_release(const Args& args) {
  auto session = session_at(args, 2);
  if (!session) return session.status();
  auto token = parse_uint(args[3], "token", 1, UINT64_MAX);
  if (!token) return token.status();
  std::uint64_t seq = 0;
  if (args.size() == 6 && iequals(args[4], "SEQ")) {
    auto n = parse_uint(args[5], "SEQ", 1, INT64_MAX);
    if (!n) return n.status();
    seq = *n;
  } else if (args.size() != 4) {
    return syntax("want LOCK.RELEASE name session token [SEQ n]");
  }
  return with_body(core::Release{args[1], *session, *token}, *session, seq);
}

Result<core::Command> parse_lock_extend(const Args& args) {
  auto session = session_at(args, 2);
  if (!session) return session.status();
  auto token = parse_uint(args[3], "token", 1, UINT64_MAX);
  if (!token) return token.status();
  auto ms = parse_uint(args[4], "ms", 1, core::kMaxSessionTtlMs);
  if (!ms) return ms.status();
  if (args.size() != 5) return syntax("want LOCK.EXTEND name session token ms");
  return with_body(core::ExtendLease{args[1], *session, *token, *ms}, *session);
}

Result<core::Command> parse_lock_transfer(const Args& args) {
  auto from = session_at(args, 2);
  if (!from) return from.status();
  auto token = parse_uint(args[3], "token", 1, UINT64_MAX);
  if (!token) return token.status();
  auto to = session_at(args, 4);
  if (!to) return to.status();
  if (args.size() != 5) return syntax("want LOCK.TRANSFER name from_session token to_session");
  return with_body(core::Transfer{args[1], *from, *token, *to}, *from);
}

Result<core::Command> parse_fence_put(const Args& args) {
  auto token = parse_uint(args[4], "token", 1, UINT64_MAX);
  if (!token) return token.status();
  return with_body(core::FencePut{args[1], args[2], args[3], *token});
}

Result<CompatSetArgs> parse_compat_set(const Args& args) {
  const Status bad(ErrorCode::kInvalidArgument, "syntax error");
  core::CompatSet body;
  body.key = args[1];
  body.value = args[2];
  CompatSetArgs out;
  bool have_expiry = false;
  for (std::size_t i = 3; i < args.size(); ++i) {
    const std::string& opt = args[i];
    if (iequals(opt, "NX") || iequals(opt, "XX")) {
      if (body.condition != core::CompatCondition::kNone) return bad;
      body.condition = iequals(opt, "NX") ? core::CompatCondition::kIfAbsent : core::CompatCondition::kIfPresent;
    } else if (iequals(opt, "GET")) {
      body.return_old = true;
    } else if (iequals(opt, "TOKEN")) {
      out.want_token = true;
    } else if ((iequals(opt, "PX") || iequals(opt, "EX")) && i + 1 < args.size()) {
      if (have_expiry) return bad;
      have_expiry = true;
      const bool seconds = iequals(opt, "EX");
      // At most the longest session TTL, so EX * 1000 cannot overflow.
      const std::int64_t max = static_cast<std::int64_t>(core::kMaxSessionTtlMs) / (seconds ? 1000 : 1);
      auto n = parse_int(args[++i], "expire time", INT64_MIN, max);
      if (!n) return n.status();
      if (*n <= 0) return Status(ErrorCode::kInvalidArgument, "invalid expire time in 'set' command");
      body.ttl_ms = static_cast<std::uint64_t>(seconds ? *n * 1000 : *n);
    } else {
      return bad;
    }
  }
  // A compat key is a lock; one without expiry would never be freed if its
  // holder died, which breaks the service's promise that every lock ends.
  // So unlike Redis, SET needs PX or EX (docs/redis-compat.md).
  if (!have_expiry) return Status(ErrorCode::kInvalidArgument, std::string(kCompatSetNeedsExpiry));
  out.command = with_body(std::move(body));
  return out;
}

Result<std::int64_t> parse_pexpire_ms(const std::string& text) {
  return parse_int(text, "expire time", INT64_MIN, static_cast<std::int64_t>(core::kMaxSessionTtlMs));
}

WriteParser find_write_parser(std::string_view name) {
  struct Entry {
    std::string_view name;
    WriteParser parse;
  };
  static constexpr Entry kParsers[] = {
      {"SESSION.OPEN", &parse_session_open}, {"SESSION.CLOSE", &parse_session_close},
      {"SESSION.KILL", &parse_session_kill}, {"LOCK.ACQUIRE", &parse_lock_acquire},
      {"LOCK.RELEASE", &parse_lock_release}, {"LOCK.REVOKE", &parse_lock_revoke},
      {"LOCK.CANCEL", &parse_lock_cancel},   {"FENCE.PUT", &parse_fence_put},
      {"SET", &parse_set_command},           {"DELIFEQ", &parse_delifeq},
      {"LOCK.EXTEND", &parse_lock_extend},   {"LOCK.TRANSFER", &parse_lock_transfer},
  };
  for (const Entry& e : kParsers) {
    if (e.name == name) return e.parse;
  }
  return nullptr;
}

}  // namespace leasehold::server
