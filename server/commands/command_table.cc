#include "server/commands/command_table.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "server/base/args.h"

namespace leasehold::server {

const CommandTable& CommandTable::instance() {
  static const CommandTable table;
  return table;
}

CommandTable::CommandTable() {
  add_standard_commands(specs_);
  add_session_commands(specs_);
  add_lock_commands(specs_);
  add_fence_commands(specs_);
  add_compat_commands(specs_);
  add_script_commands(specs_);
  add_history_commands(specs_);
  add_auth_commands(specs_);
  add_read_mode_commands(specs_);
  add_cluster_commands(specs_);
  std::sort(specs_.begin(), specs_.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
}

const CommandSpec* CommandTable::find(std::string_view name) const {
  if (name.size() > 64) return nullptr;
  const std::string upper = to_upper(name);
  auto it = std::lower_bound(specs_.begin(), specs_.end(), upper,
                             [](const CommandSpec& s, const std::string& n) { return s.name < n; });
  if (it == specs_.end() || it->name != upper) return nullptr;
  return &*it;
}

bool CommandTable::arity_ok(const CommandSpec& spec, std::size_t argc) {
  if (spec.arity >= 0) return argc == static_cast<std::size_t>(spec.arity);
  return argc >= static_cast<std::size_t>(-spec.arity);
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// A short, printable rendering of client bytes for error messages.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u >= 0x20 && u < 0x7f && c != '\'') ? c : '?';
  }
  if (s.size() > 64) out += "...";
  return out;
}
}  // namespace

std::string CommandTable::arity_error(const CommandSpec& spec) {
  return fmt::format("ERR wrong number of arguments for '{}' command", lower(spec.name));
}

std::string CommandTable::unknown_error(const std::vector<std::string>& args) {
  std::string out = fmt::format("ERR unknown command '{}', with args beginning with:",
                                args.empty() ? std::string() : printable(args[0]));
  for (std::size_t i = 1; i < args.size() && i <= 8; ++i) {
    out += fmt::format(" '{}'", printable(args[i]));
  }
  return out;
}

bool CommandTable::is_blocking_request(const CommandSpec& spec, const std::vector<std::string>& args) {
  if ((spec.flags & kBlocking) == 0) return false;
  for (std::size_t i = 3; i < args.size(); ++i) {
    if (iequals(args[i], "WAIT")) return true;
  }
  return false;
}

namespace {

void write_flags(const CommandSpec& spec, resp::Writer& w) {
  std::vector<std::string_view> flags;
  if (spec.flags & kWrite) flags.push_back("write");
  if (spec.flags & kReadonly) flags.push_back("readonly");
  if (spec.flags & kBlocking) flags.push_back("blocking");
  if (spec.flags & kAdmin) flags.push_back("admin");
  if (spec.flags & kFast) flags.push_back("fast");
  if (spec.flags & kConnection) flags.push_back("connection");
  if (spec.flags & kNoAuth) flags.push_back("no_auth");
  w.set_header(flags.size());
  for (auto f : flags) w.simple(f);
}

// Redis COMMAND INFO shape: name, arity, flags, first key, last key, step,
// acl categories, tips, key specs, subcommands.
void write_info(const CommandSpec& spec, resp::Writer& w) {
  w.array_header(10);
  w.bulk(lower(spec.name));
  w.integer(spec.arity);
  write_flags(spec, w);
  w.integer(spec.keys.first);
  w.integer(spec.keys.first == 0 ? 0 : spec.keys.last);
  w.integer(spec.keys.first == 0 ? 0 : spec.keys.step);
  const std::string category = acl_category_name(spec.category);
  w.set_header(category == spec.group ? 1 : 2);
  w.simple(fmt::format("@{}", spec.group));
  if (category != spec.group) w.simple(fmt::format("@{}", category));
  w.set_header(0);
  w.array_header(0);
  w.array_header(0);
}

void write_docs(const CommandSpec& spec, resp::Writer& w) {
  w.bulk(lower(spec.name));
  w.map_header(4);
  w.bulk("summary");
  w.bulk(spec.summary);
  w.bulk("since");
  w.bulk("0.1.0");
  w.bulk("group");
  w.bulk(spec.group);
  w.bulk("syntax");
  w.bulk(spec.syntax.empty() ? std::string(spec.name) : fmt::format("{} {}", spec.name, spec.syntax));
}

std::vector<const CommandSpec*> select(const CommandTable& table, const std::vector<std::string>& args) {
  std::vector<const CommandSpec*> out;
  if (args.size() <= 2) {
    for (const auto& s : table.all()) out.push_back(&s);
    return out;
  }
  // Each command once, whatever the request repeats: the reply is never
  // larger than the whole table (a request of 600,000 names used to build
  // an 82 MB reply on the loop thread).
  std::unordered_set<const CommandSpec*> seen;
  for (std::size_t i = 2; i < args.size() && seen.size() < table.all().size(); ++i) {
    if (const CommandSpec* s = table.find(args[i]); s != nullptr && seen.insert(s).second) out.push_back(s);
  }
  return out;
}

}  // namespace

void write_command_reply(const CommandTable& table, const std::vector<std::string>& args,
                         resp::Writer& w) {
  if (args.size() == 1) {
    w.array_header(table.all().size());
    for (const auto& s : table.all()) write_info(s, w);
    return;
  }
  const std::string& sub = args[1];
  if (iequals(sub, "COUNT") && args.size() == 2) {
    w.integer(static_cast<std::int64_t>(table.all().size()));
  } else if (iequals(sub, "LIST") && args.size() == 2) {
    w.array_header(table.all().size());
    for (const auto& s : table.all()) w.bulk(lower(s.name));
  } else if (iequals(sub, "INFO")) {
    const auto specs = select(table, args);
    w.array_header(specs.size());
    for (const auto* s : specs) write_info(*s, w);
  } else if (iequals(sub, "DOCS")) {
    const auto specs = select(table, args);
    w.map_header(specs.size());
    for (const auto* s : specs) write_docs(*s, w);
  } else {
    w.error(fmt::format("ERR unknown subcommand or wrong number of arguments for 'command|{}'",
                        lower(sub.substr(0, 32))));
  }
}

}  // namespace leasehold::server
