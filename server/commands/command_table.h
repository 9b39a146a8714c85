// server/commands/command_table.h: the declarative command table.
//
// Every command is one CommandSpec: name, arity, flags, summary, argument
// syntax, handler, and its access data: ACL category, which arguments are
// lock names / keys, and which argument is a session the caller must own
// (check_access() in server/security/acl.h enforces them). The table drives dispatch, the arity error messages and
// the COMMAND / COMMAND DOCS / COMMAND COUNT replies, so help and behaviour
// cannot drift apart. Handlers live in commands_<family>.cc files, each of
// which contributes its specs through an add_<family>_commands() function.
//
// Thread-safety: the table is built once (first use) and then read-only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/state_machine.h"
#include "server/net/responder.h"
#include "server/security/acl.h"
#include "server/security/command_access.h"

namespace leasehold::server {

class ServerServices;  // server/services/server_services.h
class Connection;

enum CommandFlag : std::uint32_t {
  kWrite = 1u << 0,     // proposes a log command (may start while earlier writes are in flight)
  kReadonly = 1u << 1,  // reads the applied state
  kBlocking = 1u << 2,  // may block the connection (LOCK.ACQUIRE ... WAIT)
  kAdmin = 1u << 3,     // operator command
  kFast = 1u << 4,      // O(1), no log write
  kConnection = 1u << 5, // connection-level (HELLO, PING, CLIENT...)
  kNoAuth = 1u << 6      // runs before authentication (AUTH, HELLO, QUIT)
};

// What a handler gets. `args[0]` is the command name as sent. The reference
// fields live only during the handler call; an asynchronous handler copies
// what it needs and keeps `reply` (a cheap, copyable handle).
struct CommandContext {
  ServerServices& server;
  const std::shared_ptr<Connection>& conn;
  const std::vector<std::string>& args;
  Responder reply;
};

using CommandHandler = void (*)(CommandContext&);

struct CommandSpec {
  std::string_view name;     // upper case: "LOCK.ACQUIRE"
  int arity = 0;             // >0: exactly that many words (name included); <0: at least -arity
  std::uint32_t flags = 0;
  std::string_view group;    // "session", "lock", "fence", "compat", "connection", "server"
  std::string_view summary;
  std::string_view syntax;   // argument syntax, e.g. "name session [WAIT ms]"
  CommandHandler handler = nullptr;
  AclCategory category = kAclUnset;
  KeyRange keys{};
  // Index of a session id argument that must belong to the caller (its user
  // opened it); 0 = none. Admin commands that act on others' sessions
  // (SESSION.KILL, LOCK.CANCEL) leave it 0.
  std::size_t own_session_arg = 0;
  // Further session id arguments (bit i: args[i]), beside own_session_arg:
  // with it, every argument that names a session. A sharded server refuses
  // an id another shard opened (-WRONGSHARD; server/commands/shard_routing.h).
  std::uint32_t session_args = 0;

  // True when args[i] names a session (own_session_arg or session_args).
  bool is_session_arg(std::size_t i) const {
    return (own_session_arg != 0 && i == own_session_arg) || (i < 32 && ((session_args >> i) & 1U) != 0);
  }

  // The fields check_access() reads (server/security/command_access.h).
  CommandAccess access() const {
    return CommandAccess{name, (flags & kNoAuth) != 0, category, keys, own_session_arg};
  }
};

// check_access() (server/security/acl.h) for a spec of this table.
inline std::string check_access(const AclUser* user, bool auth_required, const CommandSpec& spec,
                                const std::vector<std::string>& args, const core::StateMachine& state) {
  return check_access(user, auth_required, spec.access(), args, state);
}

class CommandTable {
 public:
  static const CommandTable& instance();

  // Case-insensitive lookup; nullptr when unknown.
  const CommandSpec* find(std::string_view name) const;
  const std::vector<CommandSpec>& all() const { return specs_; }

  // True when argc fits the spec's arity.
  static bool arity_ok(const CommandSpec& spec, std::size_t argc);
  // "ERR wrong number of arguments for 'lock.acquire' command"
  static std::string arity_error(const CommandSpec& spec);
  // "ERR unknown command 'FOO', with args beginning with: 'a' 'b'"
  static std::string unknown_error(const std::vector<std::string>& args);
  // True when this request blocks the connection (a barrier for pipelining).
  static bool is_blocking_request(const CommandSpec& spec, const std::vector<std::string>& args);

 private:
  CommandTable();
  std::vector<CommandSpec> specs_;
};

// The families (one file each).
void add_standard_commands(std::vector<CommandSpec>& out);
void add_session_commands(std::vector<CommandSpec>& out);
void add_lock_commands(std::vector<CommandSpec>& out);
void add_fence_commands(std::vector<CommandSpec>& out);
void add_compat_commands(std::vector<CommandSpec>& out);
// EVAL / EVALSHA / SCRIPT for the recognised lock scripts (commands_scripts.cc).
void add_script_commands(std::vector<CommandSpec>& out);
void add_history_commands(std::vector<CommandSpec>& out);
void add_auth_commands(std::vector<CommandSpec>& out);
// READONLY / READWRITE: this connection's reads may be served stale by a
// standby / go back to the default (redirect). +OK (also in embedded mode).
// (read_gate.cc)
void add_read_mode_commands(std::vector<CommandSpec>& out);
// CLUSTER SLOTS | SHARDS | NODES | KEYSLOT | MYID | INFO and ASKING
// (commands_cluster.cc; docs/scale-out.md).
void add_cluster_commands(std::vector<CommandSpec>& out);

// COMMAND, COMMAND COUNT, COMMAND DOCS [name...], COMMAND INFO [name...], COMMAND LIST.
// DOCS and INFO answer each named command once, in the order first named
// (unknown names are skipped), so a reply is never larger than the table's.
void write_command_reply(const CommandTable& table, const std::vector<std::string>& args,
                         resp::Writer& w);

}  // namespace leasehold::server
