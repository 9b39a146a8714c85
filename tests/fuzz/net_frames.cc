// tests/fuzz/net_frames.cc: see net_frames.h.
#include "tests/fuzz/net_frames.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <string_view>

#include "resp/parser.h"
#include "resp/writer.h"

namespace leasehold::testing {
namespace {

const char* const kLocks[] = {"a", "b", "jobs", "rw", "sem", "q/1", "q/2", "x:y"};
const char* const kKeys[] = {"k1", "k2", "k3", "cfg", "a"};

std::string num(std::uint64_t v) { return std::to_string(v); }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool names_protected_session(std::string_view arg, const Protected& p) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), v);
  return ec == std::errc() && ptr == arg.data() + arg.size() && p.sessions.count(v) > 0;
}

}  // namespace

std::string FrameGen::extreme_number() {
  ++extreme_sent_;
  switch (below(6)) {
    case 0:
    case 1:
      if (!extreme_seeds_.empty()) return extreme_seeds_[below(extreme_seeds_.size())];
      return "9223372036854775807";
    case 2: return num(rng_() >> 1);                  // a random 63-bit value
    case 3: return "-" + num((rng_() >> 1) + 1);      // negative, down to -2^63
    case 4: return num(rng_());                       // a random 64-bit value (often >= 2^63)
    default: {                                        // a huge decimal string
      std::string digits(20 + below(381), '0');
      for (char& d : digits) d = static_cast<char>('0' + below(10));
      digits[0] = static_cast<char>('1' + below(9));
      return chance(20) ? "-" + digits : digits;
    }
  }
}

std::string FrameGen::number(std::uint64_t usual) {
  return extreme_ && chance(50) ? extreme_number() : num(usual);
}

std::string FrameGen::session_arg() {
  if (extreme_ && chance(30)) return extreme_number();
  if (!sessions_.empty() && chance(85)) return num(sessions_[below(sessions_.size())]);
  return chance(50) ? num(below(token_hint_ + 10)) : "-1";
}

std::string FrameGen::token_arg() {
  return number(token_hint_ > 5 && chance(70) ? token_hint_ - below(6) : below(1000));
}
std::string FrameGen::lock_name() { return kLocks[below(std::size(kLocks))]; }
std::string FrameGen::key_name() { return kKeys[below(std::size(kKeys))]; }
std::string FrameGen::small_value() { return std::string(below(40), static_cast<char>('a' + below(26))); }

std::vector<std::string> FrameGen::command() {
  switch (below(25)) {
    case 0: return {"PING"};
    case 1: return {"PING", small_value()};
    case 2: return {"ECHO", small_value()};
    case 3: return {"HELLO", extreme_ && chance(30) ? extreme_number() : chance(50) ? "3" : "2"};
    case 4: return {"CLIENT", "SETNAME", "fz" + num(below(9))};
    case 5: return chance(50) ? std::vector<std::string>{"COMMAND", "COUNT"}
                              : std::vector<std::string>{"COMMAND", "DOCS", "lock.acquire"};
    case 6: return {"SESSION.OPEN", number(500 + below(20'000)), "OWNER", "fz"};
    case 7: return {"SESSION.KEEPALIVE", session_arg()};
    case 8: return {chance(50) ? "SESSION.CLOSE" : "SESSION.KILL", session_arg()};
    case 9: return {"SESSION.WATCH", session_arg()};
    case 10:
    case 11:
    case 12: {
      std::vector<std::string> a = {"LOCK.ACQUIRE", lock_name(), session_arg()};
      if (chance(20)) a.push_back("SHARED");
      if (chance(15)) a.insert(a.end(), {"LIMIT", number(1 + below(3))});
      if (chance(50)) a.insert(a.end(), {"WAIT", number(1 + below(40))});
      if (chance(15)) a.insert(a.end(), {"DELAY", number(below(200))});
      if (chance(30)) a.insert(a.end(), {"SEQ", number(1 + below(20))});
      return a;
    }
    case 13:
    case 14: {
      std::vector<std::string> a = {"LOCK.RELEASE", lock_name(), session_arg(), token_arg()};
      if (chance(20)) a.insert(a.end(), {"SEQ", number(1 + below(20))});
      return a;
    }
    case 15: return {"LOCK.INFO", lock_name()};
    case 16: return chance(50) ? std::vector<std::string>{"LOCK.LIST"}
                               : std::vector<std::string>{"LOCK.LIST", "q", "COUNT", number(1 + below(5))};
    case 17: return {chance(50) ? "LOCK.REVOKE" : "LOCK.CANCEL", lock_name(), session_arg()};
    case 18: return {"FENCE.PUT", key_name(), small_value(), lock_name(), token_arg()};
    case 19: return {"FENCE.GET", key_name()};
    case 20: {
      std::vector<std::string> a = {"SET", key_name(), small_value()};
      if (chance(40)) a.push_back(chance(50) ? "NX" : "XX");
      // Mostly with an expiry (leasehold refuses SET without PX / EX).
      if (chance(90)) {
        const bool ex = chance(20);
        a.insert(a.end(), {ex ? "EX" : "PX", number(ex ? 1 + below(5) : 50 + below(5000))});
      }
      if (chance(20)) a.push_back("GET");
      if (chance(20)) a.push_back("TOKEN");
      return a;
    }
    case 21: return {chance(50) ? "GET" : "PTTL", key_name()};
    case 22: return chance(50) ? std::vector<std::string>{"DEL", key_name(), key_name()}
                               : std::vector<std::string>{"DELIFEQ", key_name(), small_value()};
    case 23: return {"SESSION.LIST", "AFTER", number(below(token_hint_ + 10)), "COUNT", number(1 + below(5))};
    default: return {"PEXPIRE", key_name(), number(below(3000))};
  }
}

std::vector<std::string> FrameGen::endless_wait(const std::string& lock, std::uint64_t session) {
  return {"LOCK.ACQUIRE", lock, num(session), "WAIT", "0"};
}

std::string FrameGen::frame(const std::vector<std::string>& args) {
  std::string out;
  bool plain = true;
  for (const auto& a : args) plain = plain && !a.empty() && a.find_first_of(" \t\r\n\"'") == std::string::npos;
  if (plain && chance(10)) {  // inline command, as telnet / redis-cli would send
    for (const auto& a : args) out += a + ' ';
    out.back() = '\r';
    return out + '\n';
  }
  std::vector<std::string_view> views(args.begin(), args.end());
  resp::append_command(out, views);
  return out;
}

std::string FrameGen::mutate(std::string f) {
  const int edits = 1 + static_cast<int>(below(3));
  for (int i = 0; i < edits && !f.empty(); ++i) {
    const std::size_t at = below(f.size());
    switch (below(7)) {
      case 0: f[at] = static_cast<char>(rng_()); break;
      case 1: f.erase(at, 1 + below(4)); break;
      case 2: f.insert(at, std::string(1 + below(4), static_cast<char>(rng_()))); break;
      case 3: f.insert(at, f.substr(at, below(16))); break;
      case 4: f.resize(at); break;  // truncated: a partial frame
      case 5: f.insert(at, chance(50) ? "\r\n" : "*"); break;
      default: f.replace(at, 1, num(below(1U << 20))); break;  // a length (or anything) rewritten
    }
  }
  return f;
}

bool is_endless_wait(const std::vector<std::string>& args) {
  if (args.empty() || !iequals(args[0], "LOCK.ACQUIRE")) return false;
  for (std::size_t i = 3; i + 1 < args.size(); ++i) {
    if (!iequals(args[i], "WAIT")) continue;
    const std::string& v = args[i + 1];
    return !v.empty() && v.find_first_not_of('0') == std::string::npos;
  }
  return false;
}

std::vector<std::string> read_number_seeds(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    out.push_back(line);
  }
  return out;
}

bool touches_protected(const std::string& stream, const Protected& p) {
  resp::Parser parser(resp::Parser::Mode::kRequest);
  std::string_view rest(stream);
  for (;;) {
    resp::ParseOutcome o = parser.parse(rest);
    rest.remove_prefix(o.consumed);
    if (o.status != resp::ParseStatus::kValue) return false;
    const auto& args = o.value.elements;
    for (const resp::Value& arg : args) {
      if (p.locks.count(arg.str) > 0) return true;
    }
    // Only ending a session can hurt it; other commands naming it are fair game.
    const bool ends_session = !args.empty() && (iequals(args[0].str, "SESSION.CLOSE") ||
                                                iequals(args[0].str, "SESSION.KILL"));
    if (ends_session && args.size() > 1 && names_protected_session(args[1].str, p)) return true;
  }
}

}  // namespace leasehold::testing
