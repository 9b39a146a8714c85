// server/commands/script_catalog.h: the Lua scripts of common Redis lock libraries
// that leasehold recognises and runs natively (docs/redis-compat.md).
//
// leasehold has no Lua interpreter. A script is RECOGNISED when
//   - its text is byte for byte one of the catalogue's texts (so its SHA1 is
//     the one the library computes and sends with EVALSHA), or
//   - its normal form equals the normal form of a catalogue text. The normal
//     form is the script's token sequence: whitespace and `--` line comments
//     are dropped, '...' and "..." strings compare equal, and the command
//     names get/del/pttl/pexpire inside strings compare case-insensitively
//     (redis.call is case-insensitive for them). A script with an escape in a
//     string, a long string/comment (`[[`, `--[[`) or a character Lua does
//     not use has no normal form and is never recognised.
// Every recognised script maps to one native operation (ScriptOp).
//
// ScriptCache remembers the SHA1s of recognised texts that are not in the
// catalogue (loaded with SCRIPT LOAD or run once with EVAL), up to
// kMaxCachedScripts; the catalogue's own SHA1s are always known, also after
// SCRIPT FLUSH (a recognised script never needs Lua state).
//
// Thread-safety: recognise_script / normal_form are pure; ScriptCache is
// internally locked.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace leasehold::server {

enum class ScriptOp {
  kDeleteIfEqual,  // GET == ARGV[1] then DEL: 1 if deleted, else 0 (DELIFEQ)
  kExtend,         // redis-py Lock.extend: ARGV token, ms, "0" add / "1" replace
  kReacquire,      // redis-py Lock.reacquire: ARGV token, ms (PEXPIRE if owned)
};

// How many ARGV entries the operation needs (KEYS is always exactly one key).
std::size_t script_op_argc(ScriptOp op);

struct CatalogueEntry {
  std::string_view name;  // "redis-py Lock release", ...
  std::string_view text;  // exact text as the library sends it
  ScriptOp op;
};
const std::vector<CatalogueEntry>& script_catalogue();

// The normal form described above; nullopt when the text has none (or is
// over 8 KiB: every catalogue script is far shorter).
std::optional<std::string> normal_form(std::string_view text);

// The operation of a recognised script; nullopt for any other text.
std::optional<ScriptOp> recognise_script(std::string_view text);

class ScriptCache {
 public:
  static constexpr std::size_t kMaxCachedScripts = 1024;

  // The process-wide cache (scripts are recognised by content, so sharing
  // between servers of one process changes no reply but SCRIPT EXISTS).
  static ScriptCache& instance();

  // Recognises `text`; when recognised remembers its SHA1 and returns it with
  // the operation. nullopt: not a recognised script (nothing remembered).
  // A full cache is emptied first (clients answer -NOSCRIPT by reloading).
  std::optional<std::pair<std::string, ScriptOp>> load(std::string_view text);
  // The operation for a SHA1 (any case); nullopt when unknown.
  std::optional<ScriptOp> find(std::string_view sha1) const;
  // Forgets the loaded variants (catalogue SHA1s stay known).
  void flush();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, ScriptOp> loaded_;
};

}  // namespace leasehold::server
