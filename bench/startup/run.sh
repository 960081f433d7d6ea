#!/bin/sh
# Startup benchmark: time from spawn to the `initialize` response line, and VmRSS right after it,
# over N spawns of `lousho acp examples/demo`; and the same for the RPC door: spawn to the
# `get_state` response of `lousho --mode rpc --agent examples/demo`. Writes
# docs/performance-startup.md.
#   usage: bench/startup/run.sh [N]        (default N=50)
#   env:   LOUSHO_BIN (default <repo>/build/lousho), CC (default cc), BENCH_OUT (default the doc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-50}
bin=${LOUSHO_BIN:-$repo/build/lousho}
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
spec=examples/demo
out=${BENCH_OUT:-$repo/docs/performance-startup.md}
[ -x "$bin" ] || { echo "startup bench: no binary at $bin (set LOUSHO_BIN)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-cc} -O2 -Wall -o "$work/startup_probe" "$here/startup_probe.c"

cd "$repo"
# Warm-up (page cache), not counted.
"$work/startup_probe" 3 "$bin" "$spec" > /dev/null
"$work/startup_probe" "$n" "$bin" "$spec" > "$work/runs.txt"
"$work/startup_probe" 3 "$bin" "$spec" rpc > /dev/null
"$work/startup_probe" "$n" "$bin" "$spec" rpc > "$work/rpc.txt"
# Floor: the same spawn + pipe round trip with /bin/cat (echoes the request line).
"$work/startup_probe" "$n" /bin/cat - > "$work/floor.txt"

# nearest-rank percentile of column $1 (values sorted ascending)
pct() { sort -n | awk -v p="$1" '{v[NR]=$1} END {i=int((p*NR+99)/100); if (i<1) i=1; print v[i]}'; }
t_med=$(cut -d' ' -f1 "$work/runs.txt" | pct 50)
t_p90=$(cut -d' ' -f1 "$work/runs.txt" | pct 90)
t_min=$(cut -d' ' -f1 "$work/runs.txt" | pct 0)
t_max=$(cut -d' ' -f1 "$work/runs.txt" | pct 100)
r_med=$(cut -d' ' -f2 "$work/runs.txt" | pct 50)
r_p90=$(cut -d' ' -f2 "$work/runs.txt" | pct 90)
r_max=$(cut -d' ' -f2 "$work/runs.txt" | pct 100)
c_med=$(cut -d' ' -f3 "$work/runs.txt" | pct 50)
c_p90=$(cut -d' ' -f3 "$work/runs.txt" | pct 90)
c_min=$(cut -d' ' -f3 "$work/runs.txt" | pct 0)
c_max=$(cut -d' ' -f3 "$work/runs.txt" | pct 100)
f_med=$(cut -d' ' -f1 "$work/floor.txt" | pct 50)
f_p90=$(cut -d' ' -f1 "$work/floor.txt" | pct 90)
f_min=$(cut -d' ' -f1 "$work/floor.txt" | pct 0)
f_max=$(cut -d' ' -f1 "$work/floor.txt" | pct 100)
fr_med=$(cut -d' ' -f2 "$work/floor.txt" | pct 50)
g_med=$(cut -d' ' -f1 "$work/rpc.txt" | pct 50)
g_p90=$(cut -d' ' -f1 "$work/rpc.txt" | pct 90)
g_min=$(cut -d' ' -f1 "$work/rpc.txt" | pct 0)
g_max=$(cut -d' ' -f1 "$work/rpc.txt" | pct 100)
gr_med=$(cut -d' ' -f2 "$work/rpc.txt" | pct 50)
gr_p90=$(cut -d' ' -f2 "$work/rpc.txt" | pct 90)
gr_max=$(cut -d' ' -f2 "$work/rpc.txt" | pct 100)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
ms() { awk -v u="$1" 'BEGIN {printf "%.2f", u/1000}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.2f", k/1024}'; }
verdict() { awk -v v="$1" -v lim="$2" 'BEGIN {print (v <= lim) ? "meets" : "misses"}'; }

rel_bin=$bin
case "$bin" in "$repo"/*) rel_bin=${bin#"$repo"/} ;; esac
rel_out=$out
case "$out" in "$repo"/*) rel_out=${out#"$repo"/} ;; esac
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || echo unknown)
cache="$(dirname "$bin")/CMakeCache.txt"
build_type=$(awk -F= '/^CMAKE_BUILD_TYPE:/ {print $2}' "$cache" 2>/dev/null || true)
cxx_flags=$(awk -F= '/^CMAKE_CXX_FLAGS:/ {print substr($0, index($0, "=") + 1)}' "$cache" 2>/dev/null || true)
rel_dir=$(dirname "$rel_bin")
configure="cmake -S . -B $rel_dir -G Ninja -DCMAKE_BUILD_TYPE=${build_type:-Release} -DLOUSHO_TESTS=OFF"
[ -n "$cxx_flags" ] && configure="$configure \"-DCMAKE_CXX_FLAGS=$cxx_flags\""
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | head -1)
[ -n "$dirty" ] && commit="$commit (with uncommitted changes)"
size_kib=$(( $(wc -c < "$bin") / 1024 ))

# Hand-written notes below this marker in an existing report are kept.
marker='<!-- notes below this line are kept by bench/startup/run.sh -->'
if [ -f "$out" ] && grep -qF "$marker" "$out"; then
  awk -v m="$marker" 'keep {print} index($0, m) == 1 {keep = 1}' "$out" > "$work/notes.md"
else
  : > "$work/notes.md"
fi

cat > "$out" <<MD
# Startup performance

What is measured: the time from \`fork()\` of \`lousho acp $spec\` to the arrival of the complete
\`initialize\` response line on its stdout (the request is written to its stdin right after the
fork), and the process's resident memory (\`VmRSS\` from \`/proc/<pid>/status\`) read right after
that line. Each run is a fresh process; stdin is then closed and the exit status (0) checked.
3 warm-up runs are not counted. Percentiles are nearest-rank over $n runs. The RPC door rows
measure the same way from \`fork()\` of \`lousho --mode rpc --agent $spec\` to its \`get_state\`
response (the command is written at once; the \`ready\` frame before the response is skipped).

Targets: startup ≤ 5 ms, RSS ≤ 8 MiB.

| metric | median | p90 | min | max | target | verdict (p90) |
|---|---|---|---|---|---|---|
| spawn → \`initialize\` response | $(ms "$t_med") ms | $(ms "$t_p90") ms | $(ms "$t_min") ms | $(ms "$t_max") ms | ≤ 5 ms | $(verdict "$t_p90" 5000) |
| VmRSS after the response | $(mib "$r_med") MiB | $(mib "$r_p90") MiB | – | $(mib "$r_max") MiB | ≤ 8 MiB | $(verdict "$r_p90" 8192) |
| CPU time of the whole process (user+sys, to exit) | $(ms "$c_med") ms | $(ms "$c_p90") ms | $(ms "$c_min") ms | $(ms "$c_max") ms | – | – |
| RPC door: spawn → \`get_state\` response (\`--mode rpc --agent $spec\`) | $(ms "$g_med") ms | $(ms "$g_p90") ms | $(ms "$g_min") ms | $(ms "$g_max") ms | ≤ 5 ms | $(verdict "$g_p90" 5000) |
| RPC door: VmRSS after \`get_state\` | $(mib "$gr_med") MiB | $(mib "$gr_p90") MiB | – | $(mib "$gr_max") MiB | ≤ 8 MiB | $(verdict "$gr_p90" 8192) |
| floor: same round trip with \`/bin/cat\` | $(ms "$f_med") ms | $(ms "$f_p90") ms | $(ms "$f_min") ms | $(ms "$f_max") ms | – | RSS $(mib "$fr_med") MiB |

The floor row is what fork + exec + a pipe round trip cost on this machine at the time of the
run; wall-clock figures include whatever else the machine was doing (1/5/15-min load average
at the end of the run: $load).

Measured on $(date -u +%Y-%m-%d): commit $commit, build type ${build_type:-unknown}, binary \`$rel_bin\`
($size_kib KiB), $(uname -sr), $(nproc) CPU(s) ($cpu).

Command (from the repository root, after building the binary):

\`\`\`sh
$configure
ninja -C $rel_dir -j2 lousho
LOUSHO_BIN=$rel_bin bench/startup/run.sh $n
\`\`\`

The probe is \`bench/startup/startup_probe.c\` (built by the script with \`cc -O2\`); the script
rewrites this file (\`$rel_out\`) on each run.

$marker
MD
cat "$work/notes.md" >> "$out"
echo "startup: median $(ms "$t_med") ms, p90 $(ms "$t_p90") ms; RSS median $(mib "$r_med") MiB, p90 $(mib "$r_p90") MiB ($n runs) -> $out"
echo "rpc get_state: median $(ms "$g_med") ms, p90 $(ms "$g_p90") ms; RSS median $(mib "$gr_med") MiB; floor median $(ms "$f_med") ms"
