#!/bin/sh
# Runs the end-to-end tests of the lousho binary. Installs nothing: run scripts/setup first (it
# installs node_modules here and, when the system's Node is older than 22, a pinned one).
#   LOUSHO_BIN          the binary (default: <repo>/build/lousho)
#   LOUSHO_ACP_SCHEMA   the ACP schema.json (default: the one the ACP SDK package ships)
# Extra arguments are passed to `node --test` (e.g. a single test file).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
lousho_root=$(cd ../.. && pwd)
. ./node_path.sh
if [ "$(lousho_node_major)" -lt 22 ]; then
  echo "e2e: Node >= 22 needed (acpx), found $(node --version 2>/dev/null || echo none);" \
    "run scripts/setup" >&2
  exit 2
fi

bin=${LOUSHO_BIN:-../../build/lousho}
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
if [ ! -x "$bin" ]; then
  echo "e2e: lousho binary not found or not executable: $bin (set LOUSHO_BIN)" >&2
  exit 2
fi
LOUSHO_BIN=$bin
export LOUSHO_BIN
if [ ! -d node_modules/@agentclientprotocol/sdk ]; then
  echo "e2e: node_modules missing; run scripts/setup first" >&2
  exit 2
fi
export NPM_CONFIG_UPDATE_NOTIFIER=false

if [ "$#" -gt 0 ]; then
  exec node --test "$@"
fi
exec node --test ./*.test.mjs
