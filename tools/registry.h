// tools/registry.h: self-registration of subcommands.
//
// A cmd_<name>.cc file adds itself with
//   const bool <name>_registered = leasehold::tools::add_subcommand("<name>", &register_<name>);
// so that new subcommands never need an edit to a shared file (the flag's
// name is the subcommand's: several files may share a translation unit).
// Registration happens during static initialisation, before main(), in an
// order that depends on the link; register_all() adds the subcommands in
// the order of their names, so help and error messages list them the same
// way in every build.
#pragma once

#include <functional>
#include <vector>

namespace CLI {
class App;
}

namespace leasehold::tools {

using SubcommandRegistrar = void (*)(CLI::App&);

struct RegisteredSubcommand {
  const char* name;
  SubcommandRegistrar add;
};

std::vector<RegisteredSubcommand>& registered_subcommands();
inline bool add_subcommand(const char* name, SubcommandRegistrar r) {
  registered_subcommands().push_back({name, r});
  return true;
}

}  // namespace leasehold::tools
