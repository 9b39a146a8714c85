// tools/completion.h: shell completion scripts generated from the CLI11
// definitions of the `leasehold` subcommands and options, so that they can
// never fall behind the binary (`leasehold completion bash|zsh` prints them).
//
// They complete subcommands (nested: `session list`), the options of the
// subcommand being typed (with their descriptions in zsh), file names after
// an option that takes a value, and after `--` (in `lock NAME -- CMD`) a
// command name, then file names. Hidden subcommands and options (group "")
// are left out.
// Thread-safety: reads `root` only.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace leasehold::tools {

std::string bash_completion(const CLI::App& root);
std::string zsh_completion(const CLI::App& root);

}  // namespace leasehold::tools
