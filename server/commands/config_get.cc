// server/commands/config_get.cc: CONFIG GET (see the header).
#include "server/commands/config_get.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "server/base/args.h"
#include "server/services/server_services.h"

namespace leasehold::server {
namespace {

std::vector<std::pair<std::string, std::string>> parameters(const ServerServices& server) {
  const ServerConfig& c = server.config();
  return {
      {"save", ""},
      {"appendonly", "yes"},
      {"appendfsync", "always"},
      {"maxmemory", "0"},
      {"maxmemory-policy", "noeviction"},
      {"databases", "1"},
      {"maxclients", std::to_string(c.max_clients)},
      {"port", std::to_string(server.port())},
      {"bind", c.listen_host},
      {"dir", c.data_dir},
      {"timeout", std::to_string(c.idle_timeout.count() / 1000)},
      {"cluster-enabled", "no"},
      {"notify-keyspace-events", ""},
      {"proto-max-bulk-len", std::to_string(c.protocol.max_bulk_bytes)},
      {"client-output-buffer-limit", fmt::format("normal {} {} 0", c.max_output_bytes, c.max_output_bytes)},
  };
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point for the last `*`.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || lower(pattern[p]) == lower(text[t]))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void config_command(CommandContext& ctx) {
  if (!iequals(ctx.args[1], "GET") || ctx.args.size() < 3) {
    return ctx.reply.error_text(fmt::format(
        "ERR unknown subcommand or wrong number of arguments for 'config|{}'", ctx.args[1].substr(0, 32)));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& param : parameters(ctx.server)) {
    for (std::size_t i = 2; i < ctx.args.size(); ++i) {
      if (ctx.args[i].size() <= 128 && glob_match(ctx.args[i], param.first)) {
        out.push_back(param);
        break;
      }
    }
  }
  ctx.reply.write([&](resp::Writer& w) {
    w.map_header(out.size());
    for (const auto& [name, value] : out) {
      w.bulk(name);
      w.bulk(value);
    }
  });
}

}  // namespace leasehold::server
