// server/security/command_access.h: what the access check needs to know of a
// command: its ACL category, which arguments are lock names / keys, which
// argument is a session the caller must own, and whether it runs before
// authentication. The command table (server/commands/command_table.h) gives
// each CommandSpec these fields; check_access() (server/security/acl.h)
// reads them as a CommandAccess, so the security room does not depend on
// the commands room above it.
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace leasehold::server {

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
  // The operations HTTP listener's views: /metrics, /api/*, the dashboard
  // (server/http/http_routes.h). No RESP command is in it.
  kAclMonitor = 1u << 5,
};

// The ACL category's name ("read", "lock", ...; acl_user.cc).
std::string acl_category_name(AclCategory category);

// Which arguments are lock names or keys, Redis COMMAND INFO style: args
// first, first+step, ... up to last (-1 = the last argument). first 0 = none.
struct KeyRange {
  int first = 0;
  int last = 0;
  int step = 1;
};

// One command as check_access() sees it (CommandSpec::access()).
struct CommandAccess {
  std::string_view name;  // upper case, for the NOPERM text
  bool no_auth = false;   // runs before authentication (AUTH, HELLO, QUIT)
  AclCategory category = kAclUnset;
  KeyRange keys{};
  // Index of a session id argument that must belong to the caller; 0 = none.
  std::size_t own_session_arg = 0;
};

}  // namespace leasehold::server
