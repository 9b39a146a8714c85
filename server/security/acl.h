// server/security/acl.h: where the users come from, and the access decision made
// before every command (docs/security.md).
//
// load_acl() builds the user table from --users-file and --requirepass-file;
// with neither, the table holds only the open default user (no
// authentication: every connection is "default" with every right).
//
// check_access() is the single gate in front of the handlers, in this order:
//   1. not authenticated: only kNoAuth commands (AUTH, HELLO, QUIT) run;
//      everything else gets "NOAUTH Authentication required.";
//   2. the command's ACL category must be granted to the user;
//   3. every lock-name / key argument (CommandAccess::keys) must match one of
//      the user's patterns;
//   4. with authentication on, a session argument the caller must own
//      (CommandAccess::own_session_arg) must belong to the caller: a session
//      opened by another user (or by nobody, i.e. before authentication was
//      on) gets NOPERM; an id above the applied revision (a session that
//      cannot exist yet) gets EXPIRED, so a guessed id of a session being
//      opened right now can never be used.
// A refused command changes nothing. Errors are Redis's texts.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <string>
#include <vector>

#include "core/state_machine.h"
#include "leasehold/status.h"
#include "server/security/acl_user.h"
#include "server/security/command_access.h"

namespace leasehold::server {

struct AclFiles {
  std::string users_file;       // "" = none
  std::string requirepass_file; // "" = none; the default user's password
};

// Errors: kInvalidArgument naming the file and line (unreadable file, bad
// line, an empty or oversized password file). The files are read whole.
Result<AclUsers> load_acl(const AclFiles& files);

inline constexpr std::string_view kNoAuthError = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPassError = "WRONGPASS invalid username-password pair or user is disabled.";

// "" when `user` (nullptr = not authenticated) may run `args` now; else the
// error text to answer.
std::string check_access(const AclUser* user, bool auth_required, const CommandAccess& spec,
                         const std::vector<std::string>& args, const core::StateMachine& state);

// True when `user` may see session `session_user`'s id (LOCK.INFO): its own,
// or an admin, or authentication is off.
inline bool may_see_session(const AclUser* user, bool auth_required, const std::string& session_user) {
  return !auth_required || (user != nullptr && (user->admin() || user->name == session_user));
}

}  // namespace leasehold::server
