#include "server/security/acl.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "server/base/args.h"

namespace leasehold::server {
namespace {

constexpr std::size_t kMaxPasswordBytes = 512;

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kInvalidArgument, fmt::format("cannot read {}", path));
  std::string text;
  text.resize(max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > max_bytes) {
    return Status(ErrorCode::kInvalidArgument, fmt::format("{}: over {} bytes", path, max_bytes));
  }
  return text;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

}  // namespace

Result<AclUsers> load_acl(const AclFiles& files) {
  AclUsers users;
  if (!files.users_file.empty()) {
    auto text = read_file(files.users_file, kMaxUsersFileBytes);
    if (!text) return text.status();
    auto parsed = parse_users(*text, files.users_file);
    if (!parsed) return parsed.status();
    users = std::move(parsed).value();
  } else {
    users.users.emplace("default", open_default_user());
  }
  if (!files.requirepass_file.empty()) {
    auto text = read_file(files.requirepass_file, kMaxPasswordBytes + 2);
    if (!text) return text.status();
    std::string pass = std::move(text).value();
    if (!pass.empty() && pass.back() == '\n') pass.pop_back();
    if (!pass.empty() && pass.back() == '\r') pass.pop_back();
    if (pass.empty() || pass.size() > kMaxPasswordBytes) {
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("{}: the password is 1..{} bytes (one line)", files.requirepass_file,
                                kMaxPasswordBytes));
    }
    auto [it, fresh] = users.users.try_emplace("default", open_default_user());
    it->second.enabled = true;
    it->second.nopass = false;
    it->second.passwords.assign(1, hash_password(pass));
  }
  return users;
}

std::string check_access(const AclUser* user, bool auth_required, const CommandAccess& spec,
                         const std::vector<std::string>& args, const core::StateMachine& state) {
  if (user == nullptr) return spec.no_auth ? std::string() : std::string(kNoAuthError);
  if (!user->allows(spec.category)) {
    return fmt::format("NOPERM User {} has no permissions to run the '{}' command", user->name,
                       lower(spec.name));
  }
  if (spec.keys.first > 0) {
    const auto n = static_cast<int>(args.size());
    const int last = spec.keys.last < 0 ? n + spec.keys.last : spec.keys.last;
    for (int i = spec.keys.first; i <= last && i < n; i += std::max(1, spec.keys.step)) {
      if (!user->key_allowed(args[static_cast<std::size_t>(i)])) return "NOPERM No permissions to access a key";
    }
  }
  if (auth_required && spec.own_session_arg > 0 && spec.own_session_arg < args.size()) {
    const std::string& text = args[spec.own_session_arg];
    core::SessionId id = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || ptr != text.data() + text.size() || id == 0) return {};  // the handler answers
    if (auto s = state.session(id)) {
      if (s->user != user->name) return "NOPERM this session belongs to another user";
    } else if (id > state.revision()) {
      return error_text(Status(ErrorCode::kSessionExpired, fmt::format("session {} is not live", id)));
    }
  }
  return {};
}

}  // namespace leasehold::server
