// server/security/acl_user.h: users, their passwords (SHA-256), key patterns and
// command categories, and the users-file format that declares them.
//
// Users-file format (docs/security.md), one user per line, Redis ACL-file
// style; blank lines and lines starting with '#' are ignored:
//   user <name> <rule> <rule> ...
// rules, applied left to right:
//   on | off              enabled or not (default off)
//   #<64 hex digits>      a password, as the SHA-256 of its bytes (several allowed)
//   nopass                any password (or none) authenticates this user
//   resetpass             forget the passwords and nopass
//   token#<64 hex digits> an HTTP bearer token, as the SHA-256 of its bytes
//                         (several allowed; docs/operations.md, HTTP access)
//   resettokens           forget the bearer tokens
//   ~<glob>               a lock-name / key pattern (fnmatch: * ? [..]); ~* = all
//   allkeys | resetkeys   same as ~* | forget the patterns
//   +@<cat> | -@<cat>     grant / take a category: read lock fence admin monitor, or all
//   allcommands | nocommands   same as +@all | -@all
// A plaintext password (">secret") is refused: the file stores hashes only.
// Names: 1..128 of [A-Za-z0-9_.@-].
//
// Thread-safety: values; const methods are safe from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "leasehold/status.h"
#include "server/security/command_access.h"

namespace leasehold::server {

using PasswordHash = std::array<unsigned char, 32>;

// SHA-256 of `password` (OpenSSL libcrypto).
PasswordHash hash_password(std::string_view password);
std::string hash_hex(const PasswordHash& hash);

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  std::vector<PasswordHash> passwords;
  std::vector<PasswordHash> tokens;  // HTTP bearer tokens (SHA-256)
  std::vector<std::string> key_patterns;
  std::uint32_t categories = 0;  // AclCategory bits (kAclConnection is implied)

  bool admin() const { return (categories & kAclAdmin) != 0; }
  bool allows(AclCategory category) const {
    return category == kAclConnection || (category != kAclUnset && (categories & category) != 0) ||
           (category == kAclUnset && admin());
  }
  // True when `key` matches one of the patterns.
  bool key_allowed(std::string_view key) const;
  // Compares against every stored hash with CRYPTO_memcmp (no early exit).
  bool password_ok(std::string_view password) const;
  // True when `token_hash` is one of the user's bearer tokens; compares
  // against every stored hash with CRYPTO_memcmp (no early exit).
  bool token_ok(const PasswordHash& token_hash) const;
  // The ACL LIST line: "user alice on #<hex> ~locks/* +@lock +@read"
  // (bearer tokens as "token#<hex>").
  std::string describe() const;
};

struct AclUsers {
  std::map<std::string, AclUser, std::less<>> users;
  // nullptr when unknown.
  const AclUser* find(std::string_view name) const;
  // True unless the default user is enabled and needs no password.
  bool auth_required() const;
};

// Limits of a users file.
inline constexpr std::size_t kMaxUsersFileBytes = 1u << 20;
inline constexpr std::size_t kMaxUsers = 10'000;
inline constexpr std::size_t kMaxPatternsPerUser = 1'000;

// Parses users-file text. kInvalidArgument "<source>:<line>: <problem>" on
// the first bad line (nothing is half-applied).
Result<AclUsers> parse_users(std::string_view text, std::string_view source);

// The users a server with no users file and no password has: "default", on,
// nopass, every key, every category.
AclUser open_default_user();

}  // namespace leasehold::server
