#!/usr/bin/env bash
# What a newcomer meets on the command line, through the built binary (run by ctest):
# did-you-mean for commands and flags, --mode rpc in --help and its default agent, the greeting
# of `lousho acp` on a terminal, `lousho validate` reporting every error, warning on a model the
# catalogue does not list and agreeing with --print-agent, and a spec command named like a
# built-in one reported at load.
#   tests/cli/newcomer_test.sh LOUSHO_BINARY
set -uo pipefail
bin=${1:?usage: newcomer_test.sh LOUSHO_BINARY}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
# check NAME: the last command's output ($out) and status ($rc) pass `cond`.
fail() {
  echo "FAIL: $1" >&2
  printf '%s\n' "--- output:" "$out" "---" >&2
  failures=$((failures + 1))
}
expect_in() { # name, needle
  case "$out" in *"$2"*) echo "ok: $1" ;; *) fail "$1: expected '$2'" ;; esac
}
expect_not_in() {
  case "$out" in *"$2"*) fail "$1: did not expect '$2'" ;; *) echo "ok: $1" ;; esac
}
expect_rc() { [ "$rc" = "$2" ] && echo "ok: $1 (exit $rc)" || fail "$1: exit $rc, expected $2"; }

# A fresh HOME and project: no keys, no stored credentials, no user spec.
home=$scratch/home
project=$scratch/project
mkdir -p "$home" "$project"
run() { # in the project, with a minimal environment; stdin from /dev/null
  out=$(cd "$project" && env -i PATH=/usr/bin:/bin HOME="$home" LOUSHO_TEST_MODE=1 "$bin" "$@" \
    </dev/null 2>&1)
  rc=$?
}

# --- did you mean ---
run acpp
expect_rc "unknown command" 1
expect_in "unknown command" "LOUSHO_USAGE: unknown command 'acpp'; did you mean 'acp'?"
run validat x.yaml
expect_in "unknown command, another" "unknown command 'validat'; did you mean 'validate'?"
run frobnicate
expect_in "unknown command, nothing close" "unknown command 'frobnicate' (commands: acp, validate"
run --verison
expect_rc "unknown flag" 1
expect_in "unknown flag" "unknown flag '--verison'; did you mean '--version'?"
run acp --print-agnet
expect_in "unknown flag of a subcommand" "unknown flag '--print-agnet' for 'acp'; did you mean '--print-agent'?"
run acp --sesion-dir=/tmp/x
expect_in "unknown flag=value" "unknown flag '--sesion-dir' for 'acp'; did you mean '--session-dir'?"

# --- --mode rpc ---
run --help
expect_in "--help lists --mode rpc" "--mode"
expect_in "--help says what --mode rpc is" "rpc: serve an agent over the legacy RPC dialect"
# Without --agent: the project's spec, as `lousho acp` would serve.
mkdir -p "$project/.lousho"
printf 'name: from-project\nmodel: script/echo\n' >"$project/.lousho/agent.yaml"
run --mode rpc --log-level info --no-session
expect_rc "--mode rpc without --agent" 0
expect_in "--mode rpc serves the project's spec" "serving agent 'from-project' (script/echo) over RPC"
rm -r "$project/.lousho"
# ...and with nothing found, the built-in coding agent (prompts fail until a key is set).
run --mode rpc --log-level info --no-session
expect_rc "--mode rpc with no spec anywhere" 0
expect_in "--mode rpc serves the built-in agent" "serving agent 'lousho'"
expect_not_in "--mode rpc no longer refuses" "needs an agent"

# --- lousho acp on a terminal ---
out=$(cd "$project" && env -i PATH=/usr/bin:/bin HOME="$home" python3 - "$bin" <<'PY' 2>&1
import os, select, subprocess, sys, time
master, slave = os.openpty()
p = subprocess.Popen([sys.argv[1], "acp"], stdin=slave, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
os.close(slave)
err = b""
deadline = time.monotonic() + 30
# Read stderr until the greeting's end, or until lousho has said nothing for the whole wait.
while b"Ctrl-D" not in err:
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([p.stderr], [], [], left)[0]:
        break
    chunk = os.read(p.stderr.fileno(), 4096)
    if not chunk:
        break
    err += chunk
os.write(master, b"\x04")  # Ctrl-D: end of input on the terminal
try:
    code = p.wait(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    code = "still running"
out = p.stdout.read()
print(err.decode(), end="")
print(f"exit={code} stdout={out!r}")
PY
)
expect_in "acp on a terminal says what it is" "lousho acp speaks the Agent Client Protocol"
expect_in "acp on a terminal says how to try it" '`lousho run SPEC'
expect_in "acp on a terminal names the demo" '`scripts/demo`'
expect_in "acp on a terminal ends on Ctrl-D, stdout untouched" "exit=0 stdout=b''"
run acp
expect_not_in "acp on a pipe says nothing of the kind" "speaks the Agent Client Protocol"

# --- lousho validate ---
spec=$scratch/many.yaml
cat >"$spec" <<'YAML'
model: anthropic/claude-sonet-4-5
maxStep: 3
thinking: loud
commands:
  - name: compact
    prompt: Summarize
  - name: two words
    prompt: x
mode: fast
YAML
run validate "$spec"
expect_rc "validate with errors" 1
expect_in "every error: unknown key" "$spec:2:1: unknown key 'maxStep' (did you mean 'maxSteps'?)"
expect_in "every error: thinking" "$spec:3:11: thinking: expected one of off"
expect_in "every error: a bad command" "$spec:7:11: command name must be one word"
expect_in "every error: mode" "$spec:9:7: mode: expected one of default, accept-edits, plan, bypass"
[ "$(printf '%s\n' "$out" | grep -c "^$spec:\|^LOUSHO_CONFIG_INVALID: $spec:")" = 4 ] &&
  echo "ok: four errors, one line each" || fail "four errors, one line each"
# In file order: line 2 before 3 before 7 before 9.
order=$(printf '%s\n' "$out" | grep -o "$spec:[0-9]*" | cut -d: -f2 | tr '\n' ' ')
[ "$order" = "2 3 7 9 " ] && echo "ok: errors in file order" || fail "errors in file order: $order"

cat >"$spec" <<'YAML'
model: anthropic/claude-sonet-4-5
commands:
  - name: compact
    prompt: Summarize
YAML
run validate "$spec"
expect_rc "validate, a valid spec with an unlisted model" 0
expect_in "a model the catalogue lacks, with did-you-mean" "warning: model 'anthropic/claude-sonet-4-5' is not in the catalogue of provider 'anthropic' (did you mean 'anthropic/claude-sonnet-4-5'?)"
expect_in "a spec command named like a built-in one, at load" "command '/compact' has the name of a built-in command, which takes precedence"
validate_status=$(printf '%s\n' "$out" | grep '^status: ')
run acp --print-agent "$spec"
agent_status=$(printf '%s\n' "$out" | grep '^status: ')
[ -n "$validate_status" ] && [ "$validate_status" = "$agent_status" ] &&
  echo "ok: validate and --print-agent agree ($validate_status)" ||
  fail "validate ($validate_status) and --print-agent ($agent_status) agree"
# Stored credentials (what `lousho setup` leaves) make both say ready.
mkdir -p "$home/.config/lousho"
printf '{"model":"anthropic/claude-sonnet-4-5","env":{"ANTHROPIC_API_KEY":"sk-ant-test"}}' \
  >"$home/.config/lousho/credentials.json"
chmod 600 "$home/.config/lousho/credentials.json"
run validate "$spec"
expect_in "validate sees the stored key" "status: ready"
run acp --print-agent "$spec"
expect_in "--print-agent sees it too" "status: ready"

if [ "$failures" -gt 0 ]; then
  echo "newcomer_test: $failures failed" >&2
  exit 1
fi
echo "newcomer_test: all passed"
