// server/command_table.h: the declarative command table.
//
// Every command is one CommandSpec: name, arity, flags, summary, argument
// syntax, handler, and its access data: ACL category, which arguments are
// lock names / keys, and which argument is a session the caller must own
// (check_access() in server/acl.h enforces them). The table drives dispatch, the arity error messages and
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

#include "server/responder.h"

namespace leasehold::server {

class Server;
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

// Who may run a command (docs/security.md). A user is granted categories
// (+@read, +@lock, ...); kAclConnection commands (PING, HELLO, CLIENT, ...)
// are open to every authenticated connection. kAclUnset is a spec that
// forgot its category: only admins may run it (fail closed).
enum AclCategory : std::uint32_t {
  kAclUnset = 0,
  kAclConnection = 1u << 0,
  kAclRead = 1u << 1,   // LOCK.INFO, INFO (summary)
  kAclLock = 1u << 2,   // sessions, acquire, release, keepalive, watch
  kAclFence = 1u << 3,  // FENCE.PUT / FENCE.GET, the compat keys (SET, GET, DEL, ...)
  kAclAdmin = 1u << 4,  // SESSION.KILL / LIST, LOCK.REVOKE / CANCEL / LIST, ACL LIST / LOAD, INFO details
};

// Which arguments are lock names or keys, Redis COMMAND INFO style: args
// first, first+step, ... up to last (-1 = the last argument). first 0 = none.
struct KeyRange {
  int first = 0;
  int last = 0;
  int step = 1;
};

// What a handler gets. `args[0]` is the command name as sent. The reference
// fields live only during the handler call; an asynchronous handler copies
// what it needs and keeps `reply` (a cheap, copyable handle).
struct CommandContext {
  Server& server;
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
};

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

// The ACL category names ("read", "lock", ...) of a category set.
std::string acl_category_name(AclCategory category);

// COMMAND, COMMAND COUNT, COMMAND DOCS [name...], COMMAND INFO [name...], COMMAND LIST.
// DOCS and INFO answer each named command once, in the order first named
// (unknown names are skipped), so a reply is never larger than the table's.
void write_command_reply(const CommandTable& table, const std::vector<std::string>& args,
                         resp::Writer& w);

}  // namespace leasehold::server
