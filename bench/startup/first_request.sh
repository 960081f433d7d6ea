#!/bin/sh
# `lousho run` against `lousho acp`: spawn to the first model request on a loopback socket
# (bench/startup/first_request_probe.c), in ROUNDS alternating rounds (default 5) of N/ROUNDS
# starts each, with the floor (spawn + exec + connect of the probe itself). Prints the medians.
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
med() { sort -n "$1" | awk '{v[NR]=$1} END {i=int((50*NR+99)/100); if (i<1) i=1; printf "%.2f", v[i]/1000}'; }
p90() { sort -n "$1" | awk '{v[NR]=$1} END {i=int((90*NR+99)/100); if (i<1) i=1; printf "%.2f", v[i]/1000}'; }
echo "starts per mode: $(wc -l < "$work/run.txt"), load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in acp run floor; do
  echo "$mode: median $(med "$work/$mode.txt") ms, p90 $(p90 "$work/$mode.txt") ms"
done
