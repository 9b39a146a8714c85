// server/commands/script_catalog.cc: the recognised lock scripts (see the header).
#include "server/commands/script_catalog.h"

#include <cctype>

#include "common/sha1.h"

namespace leasehold::server {
namespace {

// redis-py 4.3.4 (Debian python3-redis) redis/lock.py, Lock.LUA_*_SCRIPT,
// byte for byte: the SHA1 of these exact texts is what Lock sends (EVALSHA).
constexpr std::string_view kRedisPyRelease = R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('del', KEYS[1])
        return 1
    )lua";

constexpr std::string_view kRedisPyExtend = R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        local expiration = redis.call('pttl', KEYS[1])
        if not expiration then
            expiration = 0
        end
        if expiration < 0 then
            return 0
        end

        local newttl = ARGV[2]
        if ARGV[3] == "0" then
            newttl = ARGV[2] + expiration
        end
        redis.call('pexpire', KEYS[1], newttl)
        return 1
    )lua";

constexpr std::string_view kRedisPyReacquire = R"lua(
        local token = redis.call('get', KEYS[1])
        if not token or token ~= ARGV[1] then
            return 0
        end
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 1
    )lua";

// The compare-and-delete release of the Redis docs (distributed locks page;
// Redlock's release), as printed there, without a trailing newline.
constexpr std::string_view kCanonicalRelease =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n"
    "    return redis.call(\"del\",KEYS[1])\n"
    "else\n"
    "    return 0\n"
    "end";

// The same as one line, as the seeds and many blog posts write it.
constexpr std::string_view kCanonicalReleaseOneLine =
    "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";

// The "end return 0" shape (no else branch).
constexpr std::string_view kReleaseNoElse =
    "if redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n"
    "    return redis.call(\"DEL\", KEYS[1])\n"
    "end\n"
    "return 0";

constexpr std::size_t kMaxNormalisedBytes = 8192;

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// A string literal's content, folded for the command names redis.call
// treats case-insensitively.
std::string fold_command_name(std::string s) {
  std::string lower = s;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "get" || lower == "del" || lower == "pttl" || lower == "pexpire") return lower;
  return s;
}

struct Recognised {
  std::string normal;
  ScriptOp op;
};

const std::vector<Recognised>& normal_catalogue() {
  static const std::vector<Recognised> normals = [] {
    std::vector<Recognised> out;
    for (const auto& e : script_catalogue()) out.push_back({*normal_form(e.text), e.op});
    return out;
  }();
  return normals;
}

const std::unordered_map<std::string, ScriptOp>& catalogue_shas() {
  static const std::unordered_map<std::string, ScriptOp> shas = [] {
    std::unordered_map<std::string, ScriptOp> out;
    for (const auto& e : script_catalogue()) out.emplace(sha1_hex(e.text), e.op);
    return out;
  }();
  return shas;
}

}  // namespace

std::size_t script_op_argc(ScriptOp op) {
  switch (op) {
    case ScriptOp::kDeleteIfEqual: return 1;
    case ScriptOp::kExtend: return 3;
    case ScriptOp::kReacquire: return 2;
  }
  return 0;
}

const std::vector<CatalogueEntry>& script_catalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"redis-py Lock release", kRedisPyRelease, ScriptOp::kDeleteIfEqual},
      {"redis-py Lock extend", kRedisPyExtend, ScriptOp::kExtend},
      {"redis-py Lock reacquire", kRedisPyReacquire, ScriptOp::kReacquire},
      {"compare-and-delete release (Redis docs, Redlock)", kCanonicalRelease, ScriptOp::kDeleteIfEqual},
      {"compare-and-delete release (one line)", kCanonicalReleaseOneLine, ScriptOp::kDeleteIfEqual},
      {"compare-and-delete release (end return 0)", kReleaseNoElse, ScriptOp::kDeleteIfEqual},
  };
  return entries;
}

std::optional<std::string> normal_form(std::string_view text) {
  if (text.size() > kMaxNormalisedBytes) return std::nullopt;
  std::string out;
  auto emit = [&out](std::string_view token) {
    if (!out.empty()) out += ' ';
    out += token;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
    } else if (text.substr(i, 2) == "--") {
      if (text.substr(i, 3) == "--[") return std::nullopt;  // maybe a long comment
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (ident_start(c)) {
      const std::size_t start = i;
      while (i < text.size() && ident_char(text[i])) ++i;
      emit(text.substr(start, i - start));
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      const std::size_t start = i;
      while (i < text.size() && (ident_char(text[i]) || text[i] == '.')) ++i;
      emit(text.substr(start, i - start));
    } else if (c == '"' || c == '\'') {
      const std::size_t start = ++i;
      while (i < text.size() && text[i] != c) {
        if (text[i] == '\\' || text[i] == '\n') return std::nullopt;
        ++i;
      }
      if (i == text.size()) return std::nullopt;
      emit("\"" + fold_command_name(std::string(text.substr(start, i - start))) + "\"");
      ++i;
    } else if (text.substr(i, 2) == "==" || text.substr(i, 2) == "~=" || text.substr(i, 2) == "<=" ||
               text.substr(i, 2) == ">=" || text.substr(i, 2) == "..") {
      emit(text.substr(i, 2));
      i += 2;
    } else if (c == '[' && i + 1 < text.size() && (text[i + 1] == '[' || text[i + 1] == '=')) {
      return std::nullopt;  // a long string
    } else if (std::string_view("()[]{},.;:+-*/%^#<>=").find(c) != std::string_view::npos) {
      emit(text.substr(i, 1));
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<ScriptOp> recognise_script(std::string_view text) {
  for (const auto& e : script_catalogue()) {
    if (e.text == text) return e.op;
  }
  const auto normal = normal_form(text);
  if (!normal) return std::nullopt;
  for (const auto& r : normal_catalogue()) {
    if (r.normal == *normal) return r.op;
  }
  return std::nullopt;
}

ScriptCache& ScriptCache::instance() {
  static ScriptCache cache;
  return cache;
}

std::optional<std::pair<std::string, ScriptOp>> ScriptCache::load(std::string_view text) {
  const auto op = recognise_script(text);
  if (!op) return std::nullopt;
  std::string sha = sha1_hex(text);
  if (catalogue_shas().count(sha) == 0) {
    std::lock_guard lock(mu_);
    if (loaded_.size() >= kMaxCachedScripts && loaded_.count(sha) == 0) loaded_.clear();
    loaded_[sha] = *op;
  }
  return std::make_pair(std::move(sha), *op);
}

std::optional<ScriptOp> ScriptCache::find(std::string_view sha1) const {
  if (sha1.size() != 40) return std::nullopt;
  std::string lower(sha1);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (const auto it = catalogue_shas().find(lower); it != catalogue_shas().end()) return it->second;
  std::lock_guard lock(mu_);
  if (const auto it = loaded_.find(lower); it != loaded_.end()) return it->second;
  return std::nullopt;
}

void ScriptCache::flush() {
  std::lock_guard lock(mu_);
  loaded_.clear();
}

}  // namespace leasehold::server
