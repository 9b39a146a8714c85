#include "server/security/acl_user.h"

#include <fnmatch.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <fmt/format.h>

namespace leasehold::server {

std::string acl_category_name(AclCategory category) {
  switch (category) {
    case kAclUnset: return "unset";
    case kAclConnection: return "connection";
    case kAclRead: return "read";
    case kAclLock: return "lock";
    case kAclFence: return "fence";
    case kAclAdmin: return "admin";
    case kAclMonitor: return "monitor";
  }
  return "unknown";
}

namespace {

constexpr std::uint32_t kAllCategories = kAclRead | kAclLock | kAclFence | kAclAdmin | kAclMonitor;

Status bad(std::string_view source, std::size_t line, const std::string& what) {
  return Status(ErrorCode::kInvalidArgument, fmt::format("{}:{}: {}", source, line, what));
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parse_hash(std::string_view hex, PasswordHash& out) {
  if (hex.size() != 64) return false;
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

std::uint32_t category_bits(std::string_view name) {
  if (name == "all") return kAllCategories;
  if (name == "read") return kAclRead;
  if (name == "lock") return kAclLock;
  if (name == "fence") return kAclFence;
  if (name == "admin") return kAclAdmin;
  if (name == "monitor") return kAclMonitor;
  return 0;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Applies one rule; returns the problem or "".
std::string apply_rule(AclUser& u, std::string_view rule) {
  if (rule == "on") {
    u.enabled = true;
  } else if (rule == "off") {
    u.enabled = false;
  } else if (rule == "nopass") {
    u.nopass = true;
    u.passwords.clear();
  } else if (rule == "resetpass") {
    u.nopass = false;
    u.passwords.clear();
  } else if (rule == "resettokens") {
    u.tokens.clear();
  } else if (rule.rfind("token#", 0) == 0) {
    PasswordHash h{};
    if (!parse_hash(rule.substr(6), h)) return "a bearer token is 'token#' and 64 hex digits (SHA-256 of the token)";
    u.tokens.push_back(h);
  } else if (rule == "allkeys") {
    u.key_patterns.assign(1, "*");
  } else if (rule == "resetkeys") {
    u.key_patterns.clear();
  } else if (rule == "allcommands") {
    u.categories = kAllCategories;
  } else if (rule == "nocommands") {
    u.categories = 0;
  } else if (rule[0] == '#') {
    PasswordHash h{};
    if (!parse_hash(rule.substr(1), h)) return "a password hash is '#' and 64 hex digits (SHA-256)";
    u.nopass = false;
    u.passwords.push_back(h);
  } else if (rule[0] == '>' || rule[0] == '<') {
    return "plaintext passwords are not accepted; write '#' and the SHA-256 of the password "
           "(printf %s 'secret' | sha256sum)";
  } else if (rule[0] == '~') {
    if (rule.size() < 2 || rule.size() > 1024) return "a key pattern is '~' and 1..1023 characters";
    if (u.key_patterns.size() >= kMaxPatternsPerUser) return "too many key patterns";
    u.key_patterns.emplace_back(rule.substr(1));
  } else if (rule.size() > 2 && (rule[0] == '+' || rule[0] == '-') && rule[1] == '@') {
    const std::uint32_t bits = category_bits(rule.substr(2));
    if (bits == 0) {
      return fmt::format("unknown category '{}' (read, lock, fence, admin, monitor, all)", rule.substr(2, 32));
    }
    if (rule[0] == '+') {
      u.categories |= bits;
    } else {
      u.categories &= ~bits;
    }
  } else {
    return fmt::format("unknown rule '{}'", rule.substr(0, 64));
  }
  return {};
}

}  // namespace

PasswordHash hash_password(std::string_view password) {
  PasswordHash out{};
  unsigned int len = 0;
  EVP_Digest(password.data(), password.size(), out.data(), &len, EVP_sha256(), nullptr);
  return out;
}

std::string hash_hex(const PasswordHash& hash) {
  std::string out;
  out.reserve(64);
  for (unsigned char c : hash) out += fmt::format("{:02x}", c);
  return out;
}

bool AclUser::key_allowed(std::string_view key) const {
  // "*" (every key, the default user's) first: it needs no copy of the key.
  for (const std::string& p : key_patterns) {
    if (p == "*") return true;
  }
  if (key_patterns.empty()) return false;
  const std::string k(key);  // fnmatch wants NUL-terminated text
  for (const std::string& p : key_patterns) {
    if (::fnmatch(p.c_str(), k.c_str(), 0) == 0) return true;
  }
  return false;
}

bool AclUser::password_ok(std::string_view password) const {
  const PasswordHash given = hash_password(password);
  bool match = false;
  for (const PasswordHash& h : passwords) {
    match |= CRYPTO_memcmp(h.data(), given.data(), given.size()) == 0;
  }
  return nopass || match;
}

bool AclUser::token_ok(const PasswordHash& token_hash) const {
  bool match = false;
  for (const PasswordHash& h : tokens) {
    match |= CRYPTO_memcmp(h.data(), token_hash.data(), token_hash.size()) == 0;
  }
  return match;
}

std::string AclUser::describe() const {
  std::string out = fmt::format("user {} {}", name, enabled ? "on" : "off");
  if (nopass) out += " nopass";
  for (const PasswordHash& h : passwords) out += " #" + hash_hex(h);
  for (const PasswordHash& h : tokens) out += " token#" + hash_hex(h);
  for (const std::string& p : key_patterns) out += " ~" + p;
  if (key_patterns.empty()) out += " resetkeys";
  if ((categories & kAllCategories) == kAllCategories) {
    out += " +@all";
  } else if (categories == 0) {
    out += " -@all";
  } else {
    for (AclCategory c : {kAclRead, kAclLock, kAclFence, kAclAdmin, kAclMonitor}) {
      if (categories & c) out += " +@" + acl_category_name(c);
    }
  }
  return out;
}

const AclUser* AclUsers::find(std::string_view name) const {
  auto it = users.find(name);
  return it == users.end() ? nullptr : &it->second;
}

bool AclUsers::auth_required() const {
  const AclUser* d = find("default");
  return d == nullptr || !d->enabled || !d->nopass;
}

AclUser open_default_user() {
  AclUser u;
  u.name = "default";
  u.enabled = true;
  u.nopass = true;
  u.key_patterns = {"*"};
  u.categories = kAllCategories;
  return u;
}

Result<AclUsers> parse_users(std::string_view text, std::string_view source) {
  if (text.size() > kMaxUsersFileBytes) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("{}: over {} bytes", source, kMaxUsersFileBytes));
  }
  AclUsers out;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto words = split_words(line);
    if (words.empty() || words[0][0] == '#') continue;
    if (words[0] != "user") return bad(source, line_no, "a line starts with 'user'");
    if (words.size() < 2 || !valid_name(words[1])) {
      return bad(source, line_no, "a user name is 1..128 of [A-Za-z0-9_.@-]");
    }
    if (out.users.count(words[1]) != 0) {
      return bad(source, line_no, fmt::format("user '{}' is declared twice", words[1]));
    }
    if (out.users.size() >= kMaxUsers) return bad(source, line_no, "too many users");
    AclUser u;
    u.name = std::string(words[1]);
    for (std::size_t i = 2; i < words.size(); ++i) {
      if (std::string err = apply_rule(u, words[i]); !err.empty()) {
        return bad(source, line_no, fmt::format("user '{}': {}", u.name, err));
      }
    }
    out.users.emplace(u.name, std::move(u));
  }
  return out;
}

}  // namespace leasehold::server
