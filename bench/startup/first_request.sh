#!/bin/sh
# `lousho run` against `lousho acp`: spawn to the first model request on a loopback socket
# (bench/startup/first_request_probe.c), in ROUNDS alternating rounds (default 5) of N/ROUNDS
# starts each, with the floor (spawn + exec + connect of the probe itself). Prints the medians
# and 90th percentiles of the wall time and of the CPU the process used to get there.
#   usage: bench/startup/first_request.sh [N]    (default 100)
#   env:   LOUSHO_BIN (default <repo>/build/lousho), CC (default cc), ROUNDS
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
n=${1:-100}
bin=${LOUSHO_BIN:-$repo/build/lousho}
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
[ -x "$bin" ] || { echo "first-request bench: no binary at $bin (set LOUSHO_BIN)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
${CC:-cc} -O2 -Wall -o "$work/probe" "$here/first_request_probe.c"
rounds=${ROUNDS:-5}
per=$(( (n + rounds - 1) / rounds ))
for mode in acp run floor; do "$work/probe" 3 "$bin" "$mode" > /dev/null; done  # warm-up
for _ in $(seq "$rounds"); do
  for mode in acp run floor; do "$work/probe" "$per" "$bin" "$mode" >> "$work/$mode.txt"; done
done
# pct FILE COLUMN P: the P-th percentile of a column (1: wall, 2: CPU), in ms.
pct() { awk -v c="$2" '{print $c}' "$1" | sort -n |
  awk -v p="$3" '{v[NR]=$1} END {i=int((p*NR+99)/100); if (i<1) i=1; printf "%.2f", v[i]/1000}'; }
echo "starts per mode: $(wc -l < "$work/run.txt"), load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in acp run floor; do
  echo "$mode: wall median $(pct "$work/$mode.txt" 1 50) ms, p90 $(pct "$work/$mode.txt" 1 90) ms;" \
    "CPU median $(pct "$work/$mode.txt" 2 50) ms, p90 $(pct "$work/$mode.txt" 2 90) ms"
done
