// Tests for support/shell_words: the wrappers Peel looks through and the lexing branches the
// issue-19 split put in functions of their own (each case here failed with its branch broken).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/shell_words.h"

namespace lousho {
namespace {

// The last text each command of `line` peels to (its written text when it peels to nothing).
std::vector<std::string> Innermost(const std::string& line) {
  std::vector<std::string> out;
  for (const auto& c : ParseShell(line).commands)
    out.push_back(c.peeled.empty() ? c.written.Display() : c.peeled.back().Display());
  return out;
}

using Texts = std::vector<std::string>;

TEST(ShellPeelTest, OptionWrappersPeelToTheCommandTheyRun) {
  // Each wrapper's options with a value are skipped with the value, so the command is found.
  for (const char* line : {
           "ionice -c 3 git push",
           "ionice --class 3 git push",
           "stdbuf -o L git push",
           "stdbuf --output L git push",
           "doas -u root git push",
           "sudo --user root git push",
           "time -f %e git push",
           "time --format %e git push",
           "nice --adjustment 5 git push",
           "exec -a name git push",
           "chronic git push",
           "unbuffer git push",
           "setsid git push",
           "builtin git push",
           "busybox git push",
           "timeout -s KILL 5 git push",
           "timeout --kill-after 1 5 git push",
       })
    EXPECT_EQ(Innermost(line), Texts{"git push"}) << line;
  // A wrapper with nothing after its options runs nothing more.
  EXPECT_EQ(Innermost("timeout 5"), Texts{"timeout 5"});
  EXPECT_EQ(Innermost("sudo -u root"), Texts{"sudo -u root"});
}

TEST(ShellPeelTest, EnvSplitStringIsReadAsACommandLine) {
  EXPECT_EQ(Innermost("env -S 'git push' origin"),
            (Texts{"git push origin", "env -S git push origin"}));
  EXPECT_EQ(Innermost("env -S'git push'"), (Texts{"git push", "env -Sgit push"}));
  EXPECT_EQ(Innermost("env --split-string='git push'"),
            (Texts{"git push", "env --split-string=git push"}));
  EXPECT_EQ(Innermost("env -u HOME -C /tmp A=1 git push"), Texts{"git push"});
}

TEST(ShellPeelTest, XargsPutsWhatItReadsWhereItsReplaceStringIs) {
  EXPECT_EQ(Innermost("xargs -i mv {} dst"), Texts{"mv<?>dst<?>"});
  EXPECT_EQ(Innermost("xargs --replace mv {} dst"), Texts{"mv<?>dst<?>"});
  EXPECT_EQ(Innermost("xargs -I X mv X dst"), Texts{"mv<?>dst<?>"});
  EXPECT_EQ(Innermost("xargs"), Texts{"echo<?>"});
}

TEST(ShellPeelTest, WatchFlockAndSu) {
  // watch runs its words through a shell, unless -x runs them as they are.
  EXPECT_EQ(Innermost("watch -n 1 'git push; ls'"),
            (Texts{"git push", "ls", "watch -n 1 git push; ls"}));
  EXPECT_EQ(Innermost("watch -x git push"), Texts{"git push"});
  EXPECT_EQ(Innermost("flock -w 5 /tmp/lock git push"), Texts{"git push"});
  EXPECT_EQ(Innermost("su --command='git push' root"),
            (Texts{"git push", "su --command=git push root"}));
  EXPECT_EQ(Innermost("su -c 'git push' root"), (Texts{"git push", "su -c git push root"}));
  EXPECT_EQ(Innermost("su root"), Texts{"su root"});
}

TEST(ShellPeelTest, SeparatorsAndCaseBranches) {
  // `;;&` and `;&` end a case branch: what follows is a pattern, not a command.
  EXPECT_EQ(Innermost("case x in a) echo a;;& b) echo b;& c) echo c;; esac"),
            (Texts{"echo a", "echo b", "echo c"}));
  EXPECT_EQ(Innermost("echo a |& cat"), (Texts{"echo a", "cat"}));
  EXPECT_EQ(Innermost("a&&b||c"), (Texts{"a", "b", "c"}));
  // Digits right before a redirection name a descriptor, not a word.
  EXPECT_EQ(Innermost("echo 2>/dev/null x"), Texts{"echo x"});
  EXPECT_EQ(Innermost("echo 2 >/dev/null"), Texts{"echo 2"});
}

TEST(ShellPeelTest, AnsiCQuotingEscapes) {
  EXPECT_EQ(Innermost("echo $'\\a\\b\\e\\E\\f\\n\\r\\t\\v'"), Texts{"echo \a\b\x1b\x1b\f\n\r\t\v"});
  EXPECT_EQ(Innermost("echo $'\\x'"), Texts{"echo \\x"});
  EXPECT_EQ(Innermost("echo $'\\x4g'"), Texts{"echo \x04g"});
  EXPECT_EQ(Innermost("echo $'\\\\\\'\\\"\\?'"), Texts{"echo \\'\"?"});
  EXPECT_EQ(Innermost("echo $'\\q'"), Texts{"echo \\q"});
  EXPECT_EQ(Innermost("echo $'\\u00e9'"), Texts{"echo<?>00e9"});
  EXPECT_TRUE(ParseShell("echo $'abc").opaque);  // unclosed
}

TEST(ShellPeelTest, BracesAndSingleQuotes) {
  EXPECT_TRUE(ParseShell("echo 'abc").opaque);
  EXPECT_EQ(Innermost("echo a\\"), Texts{"echo a\\"});
  // Inside ${ }, quotes and $( ) are skipped whole: their braces do not close it.
  EXPECT_EQ(Innermost("echo ${x:-'}'$(echo })}"), (Texts{"echo }", "echo<?>"}));
  EXPECT_EQ(Innermost("echo ${x:-\"}\"}"), Texts{"echo<?>"});
  EXPECT_EQ(Innermost("echo ${x:-`echo }`}"), (Texts{"echo }", "echo<?>"}));
}

}  // namespace
}  // namespace lousho
