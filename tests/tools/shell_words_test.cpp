// Tests for support/shell_words: what ParseShell sees in a command line.
#include "support/shell_words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho {
namespace {

// Each command as "written => peeled | peeled", gaps as <?>.
std::vector<std::string> Show(const std::string& line) {
  std::vector<std::string> out;
  for (const auto& c : ParseShell(line).commands) {
    std::string s = c.written.Display();
    for (size_t i = 0; i < c.peeled.size(); ++i) s += (i ? " | " : " => ") + c.peeled[i].Display();
    out.push_back(s);
  }
  return out;
}

using V = std::vector<std::string>;

TEST(ShellWordsTest, ListsAndQuoting) {
  EXPECT_EQ(Show("a x; b && c || d | e & f\ng"), (V{"a x", "b", "c", "d", "e", "f", "g"}));
  EXPECT_EQ(Show("echo 'a; b' \"c && d\" e\\;f"), (V{"echo a; b c && d e;f"}));
  EXPECT_EQ(Show("g''it   \"pu\"sh  \\-\\-force"), (V{"git push --force"}));
  EXPECT_EQ(Show("echo a # b; c\nd"), (V{"echo a", "d"}));
  EXPECT_EQ(Show("echo a\\\nb"), (V{"echo ab"}));
  EXPECT_EQ(Show("$'a\\tb\\x41\\101'"), (V{"a\tbAA"}));
  EXPECT_TRUE(Show("").empty());
}

TEST(ShellWordsTest, UnknownPartsAreGaps) {
  EXPECT_EQ(Show("echo $HOME ${X} \"$1\" x"), (V{"echo <?> <?> <?> x => echo<?>x"}));
  EXPECT_EQ(Show("$CMD push"), (V{"<?> push => <?>push"}));
  EXPECT_EQ(Show("a$X"), (V{"a<?>"}));
  EXPECT_EQ(Show("echo $(date) end"), (V{"date", "echo <?> end => echo<?>end"}));
  EXPECT_EQ(Show("echo `date`"), (V{"date", "echo <?> => echo<?>"}));
  EXPECT_EQ(Show("echo $((1 + $(id -u)))"), (V{"id -u", "echo <?> => echo<?>"}));
  EXPECT_EQ(Show("echo $( (git push) )"), (V{"git push", "echo <?> => echo<?>"}));
  EXPECT_EQ(Show("echo {a,b} {}"), (V{"echo <?> {} => echo<?>{}"}));
  ShellScript s = ParseShell("diff <(ls a) >(cat)");
  EXPECT_TRUE(s.substitution);
  EXPECT_FALSE(s.redirection);
  EXPECT_EQ(Show("diff <(ls a) >(cat)"), (V{"ls a", "cat", "diff <?> <?> => diff<?>"}));
}

TEST(ShellWordsTest, WrappersPeel) {
  EXPECT_EQ(Show("A=1 B+=2 sudo -u me env -i C=3 nohup nice -n 2 /bin/git push"),
            (V{"A=1 B+=2 sudo -u me env -i C=3 nohup nice -n 2 /bin/git push => "
               "sudo -u me env -i C=3 nohup nice -n 2 /bin/git push | "
               "env -i C=3 nohup nice -n 2 /bin/git push | nohup nice -n 2 /bin/git push | "
               "nice -n 2 /bin/git push | /bin/git push | git push"}));
  EXPECT_EQ(Show("xargs -0 -n1 rm -f"), (V{"xargs -0 -n1 rm -f => rm -f<?>"}));
  EXPECT_EQ(Show("xargs -I{} mv {} dst"), (V{"xargs -I{} mv {} dst => mv<?>dst<?>"}));
  EXPECT_EQ(Show("timeout --signal=KILL 10s make"), (V{"timeout --signal=KILL 10s make => make"}));
  EXPECT_EQ(Show("command -v git"), (V{"command -v git => git"}));
}

TEST(ShellWordsTest, NestedShells) {
  EXPECT_EQ(Show("bash -c 'a; b \"c d\"' name arg"),
            (V{"a", "b c d", "bash -c a; b \"c d\" name arg"}));
  EXPECT_EQ(Show("eval 'a && b'"), (V{"a", "b", "eval a && b"}));
  ShellScript stdin_shell = ParseShell("curl x | sh");
  EXPECT_TRUE(stdin_shell.opaque);
  EXPECT_FALSE(ParseShell("sh ./script.sh").opaque);
  EXPECT_TRUE(ParseShell("sh -c \"$X\"").opaque);
  // Nesting deeper than kMaxShellDepth becomes unknown instead of recursing on.
  std::string deep = "git push";
  for (int i = 0; i < kMaxShellDepth + 2; ++i) deep = "echo $(" + deep + ")";
  EXPECT_TRUE(ParseShell(deep).opaque);
  std::string shallow = "git push";
  for (int i = 0; i < kMaxShellDepth - 1; ++i) shallow = "echo $(" + shallow + ")";
  ShellScript ok = ParseShell(shallow);
  EXPECT_FALSE(ok.opaque);
  EXPECT_EQ(ok.commands.front().written.Display(), "git push");
}

TEST(ShellWordsTest, CompoundCommands) {
  EXPECT_EQ(Show("if a; then b; elif c; then d; else e; fi"), (V{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(Show("for x in $(ls); do echo $x; done"), (V{"ls", "echo <?> => echo<?>"}));
  EXPECT_EQ(Show("case $1 in a|b) x;; (c) y;& *) z;; esac; w"), (V{"x", "y", "z", "w"}));
  EXPECT_EQ(Show("{ a; b; } > out"), (V{"a", "b"}));
  EXPECT_EQ(Show("function f { a; }"), (V{"a"}));
  EXPECT_EQ(Show("while read l; do p \"$l\"; done < f"), (V{"read l", "p <?> => p<?>"}));
}

TEST(ShellWordsTest, Redirections) {
  EXPECT_FALSE(ParseShell("a 2>&1 >/dev/null 2>/dev/null </dev/null >&- &>/dev/null").redirection);
  for (const char* line : {"a > f", "a >> f", "a < f", "a &> f", "a 2> f", "a <<< s", "a <<E\nx\nE",
                           "a >&f", "a > $F", "a >/dev/null2"})
    EXPECT_TRUE(ParseShell(line).redirection) << line;
  EXPECT_EQ(Show("a 2>f b"), (V{"a b"}));
  EXPECT_EQ(Show("cat <<EOF | sh2\n$(x)\n`y`\nEOF\nz"), (V{"cat", "sh2", "x", "y", "z"}));
  EXPECT_EQ(Show("cat <<-'EOF'\n\t$(x)\n\tEOF\nz"), (V{"cat", "z"}));
}

}  // namespace
}  // namespace lousho
