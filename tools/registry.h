// tools/registry.h: self-registration of subcommands.
//
// A cmd_<name>.cc file adds itself with
//   static const bool registered = leasehold::tools::add_subcommand(&register_name);
// so that new subcommands never need an edit to a shared file.
// Registration happens during static initialisation, before main().
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace leasehold::tools {

using SubcommandRegistrar = void (*)(CLI::App&);

std::vector<SubcommandRegistrar>& registered_subcommands();
inline bool add_subcommand(SubcommandRegistrar r) {
  registered_subcommands().push_back(r);
  return true;
}

}  // namespace leasehold::tools
