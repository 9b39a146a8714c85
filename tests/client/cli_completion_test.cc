// `leasehold completion bash|zsh`: the scripts are generated from the CLI11
// definitions; bash sources the script without a word on stderr, registers
// it (`complete -p`), and its function completes subcommands, nested
// subcommands, options and command names after `--`; zsh (when installed)
// loads the script after compinit and offers the same words.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "testkit/subprocess.h"
#include "testkit/temp_dir.h"

namespace leasehold::testing {
namespace {

using namespace std::chrono_literals;

struct ShellRun {
  int code = -1;
  std::string out;
  std::string err;
};

class Completion : public ::testing::Test {
 protected:
  // Runs `shell -c script` (bounded), capturing stdout and stderr.
  ShellRun shell(const std::string& shell, const std::string& script) {
    const std::string tag = std::to_string(++runs_);
    SpawnOptions o;
    o.stdout_path = dir_.file(tag + ".out");
    o.stderr_path = dir_.file(tag + ".err");
    auto p = Subprocess::spawn({shell, "-c", script}, o);
    EXPECT_TRUE(p.is_ok()) << p.status().to_string();
    ShellRun r;
    if (p) r.code = p->wait(60s).value_or(-1);
    r.out = read_file(o.stdout_path);
    r.err = read_file(o.stderr_path);
    return r;
  }
  // What the bash completion function offers for the words of `line`
  // (the last word is the one being completed; "" for a new word).
  std::string complete_bash(const std::vector<std::string>& words) {
    std::string array;
    for (const auto& w : words) array += " '" + w + "'";
    return shell("bash", "source <('" + leasehold_binary() + "' completion bash) || exit 9\n"
                         "COMP_WORDS=(" + array + ")\n"
                         "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                         "_leasehold\n"
                         "echo \"${COMPREPLY[*]}\"\n")
        .out;
  }

  TempDir dir_{"cli-completion"};
  int runs_ = 0;
};

TEST_F(Completion, BashSourcesItWithoutErrorsAndRegistersIt) {
  ShellRun r = shell("bash", "source <('" + leasehold_binary() + "' completion bash) && complete -p leasehold");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "complete -o default -F _leasehold leasehold\n");
}

TEST_F(Completion, BashCompletesSubcommandsOptionsAndCommands) {
  EXPECT_EQ(complete_bash({"leasehold", "lo"}), "lock locks\n");
  EXPECT_EQ(complete_bash({"leasehold", "sess"}), "session\n");
  EXPECT_EQ(complete_bash({"leasehold", "session", "k"}), "kill\n");
  EXPECT_EQ(complete_bash({"leasehold", "completion", ""}), "bash zsh\n");
  EXPECT_EQ(complete_bash({"leasehold", "locks", "--ol"}), "--older-than\n");
  EXPECT_EQ(complete_bash({"leasehold", "lock", "--tt"}), "--ttl\n");
  // The value of an option: nothing from us (bash falls back to file names).
  EXPECT_EQ(complete_bash({"leasehold", "lock", "--ttl", ""}), "\n");
  // After `--`: a command name.
  EXPECT_EQ(complete_bash({"leasehold", "lock", "name", "--", "basenam"}), "basename\n");
  // Every visible subcommand is offered at the top.
  const std::string top = complete_bash({"leasehold", ""});
  for (const char* sub : {"lock", "locks", "info", "revoke", "history", "status", "session", "server", "completion"}) {
    EXPECT_NE((" " + top).find(std::string(" ") + sub + " "), std::string::npos) << sub << " in " << top;
  }
}

TEST_F(Completion, ZshScriptDefinesTheFunction) {
  ShellRun script = shell("sh", "'" + leasehold_binary() + "' completion zsh");
  ASSERT_EQ(script.code, 0) << script.err;
  EXPECT_EQ(script.out.rfind("#compdef leasehold\n", 0), 0u);
  EXPECT_NE(script.out.find("'session:List or kill sessions (operator)'"), std::string::npos);
  if (shell("sh", "command -v zsh").code != 0) {
    GTEST_SKIP() << "zsh is not installed: the script was checked as text only";
  }
  ShellRun r = shell("zsh", "autoload -U compinit && compinit -u && source <('" + leasehold_binary() +
                                "' completion zsh) && (( $+functions[_leasehold] )) && echo ${_comps[leasehold]}");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "_leasehold\n") << r.err;
  // What _leasehold hands to zsh's completion system, with _describe,
  // _files and _command_names replaced by stubs that print their input.
  ShellRun offered = shell(
      "zsh", "autoload -U compinit && compinit -u && source <('" + leasehold_binary() + "' completion zsh)\n"
             "_describe() { local -a arr; arr=(\"${(@P)4}\"); print -r -- \"${(j: :)${arr[@]%%:*}}\"; }\n"
             "_files() { print files; }\n"
             "_command_names() { print commands; }\n"
             "words=(leasehold session ''); CURRENT=3; _leasehold\n"
             "words=(leasehold locks --ol); CURRENT=3; _leasehold\n"
             "words=(leasehold lock --ttl ''); CURRENT=4; _leasehold\n"
             "words=(leasehold lock name -- ''); CURRENT=5; _leasehold\n");
  EXPECT_EQ(offered.code, 0) << offered.err;
  const auto lines = offered.out;
  EXPECT_EQ(lines.substr(0, lines.find('\n')), "list kill") << lines;
  EXPECT_NE(lines.find(" --older-than "), std::string::npos) << lines;
  EXPECT_NE(lines.find("\nfiles\ncommands\n"), std::string::npos) << lines;
}

}  // namespace
}  // namespace leasehold::testing
