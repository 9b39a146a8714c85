// tools/usage_errors.cc: see the header.
#include "tools/usage_errors.h"

#include <CLI/CLI.hpp>

#include <string_view>

namespace leasehold::tools {

std::string subcommand_list(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden
    out += (out.empty() ? "" : ", ") + sub->get_name();
  }
  return out;
}

std::string explain_parse_error(const CLI::App& root, const CLI::ParseError& error, int argc,
                                const char* const* argv) {
  const CLI::App* current = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-') {
      // An option that takes a value consumes the next word (unless "--x=v").
      const std::size_t eq = arg.find('=');
      const CLI::Option* opt = current->get_option_no_throw(std::string(arg.substr(0, eq)));
      if (opt != nullptr && opt->get_items_expected_min() > 0 && eq == std::string_view::npos) ++i;
      continue;
    }
    const auto subs = current->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) continue;  // a positional argument
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : subs) {
      if (s->check_name(std::string(arg))) sub = s;
    }
    if (sub != nullptr) {
      current = sub;
      continue;
    }
    if (current->get_require_subcommand_min() == 0) continue;
    std::string message = "unknown subcommand '" + std::string(arg) + "'";
    if (current != &root) message += " of '" + current->get_name() + "'";
    return message + " (subcommands: " + subcommand_list(*current) + ")";
  }
  if (error.get_name() == "RequiredError" && current->get_require_subcommand_min() > 0 &&
      current->get_subcommands().empty()) {
    return "a subcommand is required (subcommands: " + subcommand_list(*current) + ")";
  }
  return "";
}

}  // namespace leasehold::tools
