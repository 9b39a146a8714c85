#include "server/security/http_credentials.h"

#include <cctype>
#include <cstdint>

namespace leasehold::server {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with optional '=' padding; nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = base64_value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

bool scheme_is(std::string_view header, std::string_view scheme) {
  if (header.size() <= scheme.size() || header[scheme.size()] != ' ') return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i]) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HttpIdentity bad() { return HttpIdentity{HttpIdentity::Outcome::kBad, nullptr}; }

}  // namespace

HttpIdentity identify_http(const AclUsers& users, const std::optional<std::string>& authorization) {
  if (!authorization) {
    if (users.auth_required()) return HttpIdentity{};
    return HttpIdentity{HttpIdentity::Outcome::kUser, users.find("default")};
  }
  const std::string_view header = trim(*authorization);
  if (header.size() > kMaxHttpCredentialBytes) return bad();
  if (scheme_is(header, "basic")) {
    auto decoded = base64_decode(trim(header.substr(6)));
    if (!decoded) return bad();
    const std::size_t colon = decoded->find(':');
    if (colon == std::string::npos) return bad();
    const std::string_view name = std::string_view(*decoded).substr(0, colon);
    const AclUser* u = users.find(name);
    if (u == nullptr || !u->enabled) return bad();
    if (!u->password_ok(std::string_view(*decoded).substr(colon + 1))) return bad();
    return HttpIdentity{HttpIdentity::Outcome::kUser, u};
  }
  if (scheme_is(header, "bearer")) {
    const std::string_view token = trim(header.substr(7));
    if (token.empty()) return bad();
    const PasswordHash given = hash_password(token);
    const AclUser* found = nullptr;
    for (const auto& [name, u] : users.users) {
      // Every user is compared (no early exit); a disabled user's token
      // authenticates nobody.
      if (u.token_ok(given) && u.enabled && found == nullptr) found = &u;
    }
    if (found == nullptr) return bad();
    return HttpIdentity{HttpIdentity::Outcome::kUser, found};
  }
  return bad();
}

}  // namespace leasehold::server
