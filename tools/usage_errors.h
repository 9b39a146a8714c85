// tools/usage_errors.h: plainer words for the argument parser's errors that
// mislead a new user.
//
// explain_parse_error: after CLI11 refused `argv`, returns a better one-line
// message, or "" to keep CLI11's own:
//   `leasehold bogus`    -> "unknown subcommand 'bogus' (subcommands: lock, locks, ...)"
//   `leasehold session x`-> "unknown subcommand 'x' of 'session' (subcommands: kill, list)"
//   `leasehold`          -> "a subcommand is required (subcommands: ...)"
// Subcommands in a group named "" (hidden) are not listed.
// Thread-safety: reads `root` only.
#pragma once

#include <string>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace leasehold::tools {

std::string explain_parse_error(const CLI::App& root, const CLI::ParseError& error, int argc,
                                const char* const* argv);

// The visible subcommand names of `app`, comma-separated.
std::string subcommand_list(const CLI::App& app);

}  // namespace leasehold::tools
