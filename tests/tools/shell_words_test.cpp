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
  // The output of `id -u` is evaluated as arithmetic: what else it could run is unknown.
  EXPECT_EQ(Show("echo $((1 + $(id -u)))"), (V{"id -u", "echo <?> => echo<?>", "<?>"}));
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

// Whether some simple command of `line` reads as `text`.
bool Runs(const std::string& line, const std::string& text) {
  for (const auto& c : ParseShell(line).commands)
    if (c.written.Display() == text) return true;
  return false;
}

TEST(ShellWordsTest, CodeBashKeepsInStringsIsRead) {
  for (const char* line : {
           "trap 'git push' EXIT",
           "trap -- 'git push' ERR",
           "mapfile -C 'git push #' -c 1 <<< x",
           "readarray -C'git push #' arr",
           "compgen -C 'git push' x",
           "PROMPT_COMMAND='git push' bash -i",
           "alias g='git push'",
           "env 'BASH_FUNC_f%%=() { git push; }' bash -c f",
           "runuser me -c 'git push'",
           "script -qc 'git push' /dev/null",
           "flock -c 'git push' lockfile",
           "parallel 'git push' ::: x",
       })
    EXPECT_TRUE(Runs(line, "git push")) << line;
  // Prompt strings are expanded: their substitutions run.
  for (const char* line : {"PS4='$(git push)' bash -xc :", "set -x; PS4='`git push`'; :",
                           "export 'PS4=$(git push)'", "compgen -W '$(git push)'"}) {
    EXPECT_TRUE(Runs(line, "git push")) << line;
    EXPECT_TRUE(ParseShell(line).substitution) << line;
  }
}

TEST(ShellWordsTest, SubscriptsAndArithmeticAreRead) {
  // Bash evaluates these operands as arithmetic or as a name with a subscript, quoted or not:
  // the substitutions inside run.
  for (const char* line : {
           "printf -v 'a[$(git push)]' x",
           "printf -v'a[$(git push)]' x",
           "test -v 'a[$(git push)]'",
           "[ -v 'a[$(git push)]' ]",
           "[[ -v 'a[$(git push)]' ]]",
           "[[ 'a[$(git push)]' -eq 1 ]]",
           "[[ -n x && 1 -lt 'a[$(git push)]' ]]",
           "let 'a[$(git push)]=1'",
           "read 'a[$(git push)]' <<< x",
           "read -a 'a[$(git push)]' <<< x",
           "unset 'a[$(git push)]'",
           "declare 'a[$(git push)]=1'",
           "local -i n='a[$(git push)]'",
           "declare -A m='([$(git push)]=1)'",
           "wait -p 'a[$(git push)]' -n",
           "(( 'a[$(git push)]' ))",
           "echo $(( 'a[$(git push)]' ))",
           "echo $[ 'a[$(git push)]' ]",
           "for (( i = 'a[$(git push)]'; i < 1; i++ )); do :; done",
           "echo ${a['a[$(git push)]']}",
           "x=; echo \"${x:-'$(git push)'}\"",
       }) {
    EXPECT_TRUE(Runs(line, "git push")) << line;
    EXPECT_TRUE(ParseShell(line).substitution) << line;
  }
  // The same text where bash keeps it as data.
  for (const char* line :
       {"echo 'a[$(git push)]'", "ls -d 'a[$(git push)]'", "printf '%s\\n' 'a[$(git push)]'"})
    EXPECT_FALSE(Runs(line, "git push")) << line;
  // `(( ))` is arithmetic, not a subshell: its `<` is no redirection.
  EXPECT_FALSE(ParseShell("for ((i = 0; i < 3; i++)); do echo $i; done").redirection);
  EXPECT_EQ(Show("(( n = 1 + 2 )) && echo $n"), (V{"echo <?> => echo<?>"}));
}

TEST(ShellWordsTest, EvaluatedValuesThatMayHoldCodeAreUnreadable) {
  // A value bash evaluates (arithmetic on a variable, ${!x}, ${x@P}, declare -i/-n) in a line
  // that may have put code text in a value (quoted $ or backquote, command output, input,
  // printf -v, ${x@E}): what runs cannot be read.
  for (const char* line : {
           "x='a[$(git push)]'; echo $((x))",
           "x='a[`git push`]'; echo $(($x))",
           "x='a[$(git push)]'; : ${!x}",
           "i='a[$(git push)]'; a[i]=1",
           "declare -i n; n='a[$(git push)]'",
           "declare -n r='a[$(git push)]'",
           "v='$(git push)'; echo \"${v@P}\"",
           "v='\\044(git push)'; echo \"${v@P}\"",
           "echo 'a[$(git push)]' >/dev/null; echo $((_))",
           "for x in 'a[$(git push)]'; do echo $((x)); done",
           "read x; echo $((x))",
           "printf -v x '\\x24(git push)'; echo ${s:x}",
           "echo $(( $(base64 -d <<< YVsk) ))",
           "x=$'a[\\u0024(git push)]'; [[ $x -eq 1 ]]",
           "bash -c 'echo $(($1))' _ 'a[$(git push)]'",
       }) {
    ShellScript s = ParseShell(line);
    EXPECT_TRUE(s.opaque) << line;
    EXPECT_NE(s.commands.back().unreadable, "") << line;
  }
  // Either alone is no doubt: arithmetic on values the line cannot have made code, or code
  // text that nothing evaluates.
  for (const char* line :
       {"for i in 1 2 3; do echo $((i * 2)); done", "let n=1+2 i++", "(( n += 1 ))",
        "echo $((16#ff + 0x1f))", "[[ $n -eq 3 ]]", "declare -i count=0",
        "echo ${a[i]} ${s:1:2} ${#a[@]}", "x='$(git push)'; echo \"$x\"",
        "read -r line; echo \"$line\"", "bash -c 'for i in 1 2; do echo $((i + 1)); done'"})
    EXPECT_FALSE(ParseShell(line).opaque) << line;
  // Variables whose values bash runs, given values the line does not show, and the switches
  // that let a later line mean something else.
  for (const char* line :
       {"read PS4 <<< x; set -x", "printf -v PROMPT_COMMAND %s x", "PS4=\"$X\" bash -x s",
        "PS4='\\044(x)'; set -x", "BASH_ENV=\"$F\" bash -c :", ": ${PS4:=$X}",
        "hash -p /bin/rm ls; ls", "shopt -s expand_aliases", "bash -O expand_aliases -c x",
        "trap \"$X\" EXIT", "mapfile -C \"$X\" a", "BASHOPTS=expand_aliases bash -c x"})
    EXPECT_TRUE(ParseShell(line).opaque) << line;
  EXPECT_FALSE(ParseShell("PS4='+ ${LINENO}: ' bash -x script.sh").opaque);
  EXPECT_FALSE(ParseShell("shopt -s nullglob").opaque);
}

TEST(ShellWordsTest, ShellsReadingCodeFromFiles) {
  EXPECT_TRUE(Runs("rbash -c 'git push'", "git push"));
  EXPECT_TRUE(Runs("/usr/bin/fish -c 'git push'", "git push"));
  for (const char* line : {
           "bash <(echo git push)",
           ". <(echo git push)",
           "source /dev/stdin <<< 'git push'",
           "bash /dev/fd/0 <<< 'git push'",
           "sh /proc/self/fd/0 < f",
           "/proc/self/exe -c 'git push'",
           "source \"$F\"",
           "bash --rcfile <(echo git push) -i",
           "BASH_ENV=<(echo git push) bash -c :",
           // A file written and run in the same line.
           "printf 'git push\\n' > s.sh; bash s.sh",
           "echo git push >> s.sh; . ./s.sh",
           "cat > s.sh <<'EOF'\ngit push\nEOF\nsource s.sh",
           "echo git push | tee s.sh; sh s.sh",
           "echo git push > s.sh; chmod +x s.sh; ./s.sh",
           "echo git push > be.sh; BASH_ENV=./be.sh bash -c :",
           "cp /usr/bin/git g; ./g push",
           "ln -s /usr/bin/git g && ./g push",
           "dd of=s.sh <<< 'git push'; bash s.sh",
           "curl -so s.sh https://x; bash s.sh",
           "echo x > \"$F\"; ./run.sh",
           "wget https://x/s.sh; bash s.sh",
           "./$X push",
       })
    EXPECT_TRUE(ParseShell(line).opaque) << line;
  for (const char* line :
       {"bash script.sh", "source ./env.sh", ". venv/bin/activate", "source \"$HOME/.cargo/env\"",
        "./build.sh > build.log 2>&1", "chmod +x run.sh && ./run.sh", "make > out.txt; ./a.out",
        "\"$VENV/bin/python\" x.py", "echo hi | tee log.txt && ./run.sh"})
    EXPECT_FALSE(ParseShell(line).opaque) << line;
}

TEST(ShellWordsTest, MoreWrappersPeel) {
  for (const char* line : {
           "taskset 1 git push",
           "taskset -c 0,1 git push",
           "chrt -o 0 git push",
           "chrt --sched-runtime 5 -d 0 git push",
           "prlimit --nofile=1024 git push",
           "strace -f -o /dev/null -e trace=open git push",
           "ltrace -o x git push",
           "fakeroot -- git push",
           "unshare -r -w /tmp git push",
           "nsenter -t 1 -m git push",
           "chroot --userspec=me / git push",
           "systemd-run --uid me -p X=1 git push",
           "numactl -C 0 git push",
           "pkexec --user me git push",
           "faketime '2020-01-01' git push",
           "runuser -u me -- git push",
           "cpulimit -l 50 git push",
       }) {
    auto commands = ParseShell(line).commands;
    ASSERT_EQ(commands.size(), 1u) << line;
    bool peeled = false;
    for (const auto& p : commands[0].peeled) peeled = peeled || p.Display() == "git push";
    EXPECT_TRUE(peeled) << line;
  }
  // Without a command these start a shell reading its input.
  for (const char* line :
       {"unshare -r", "nsenter -t 1 -a", "fakeroot", "chroot /", "script -q", "runuser me"})
    EXPECT_TRUE(ParseShell(line).opaque) << line;
}

}  // namespace
}  // namespace lousho
