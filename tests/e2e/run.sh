#!/bin/sh
# Runs the end-to-end tests of the lousho binary. Installs nothing: run `npm ci` here first.
#   LOUSHO_BIN          the binary (default: <repo>/build/lousho)
#   LOUSHO_ACP_SCHEMA   the ACP schema.json (default: <repo>/../shared/acp/schema.json)
# Extra arguments are passed to `node --test` (e.g. a single test file).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

bin=${LOUSHO_BIN:-../../build/lousho}
case "$bin" in /*) ;; *) bin="$here/$bin" ;; esac
if [ ! -x "$bin" ]; then
  echo "e2e: lousho binary not found or not executable: $bin (set LOUSHO_BIN)" >&2
  exit 2
fi
LOUSHO_BIN=$bin
export LOUSHO_BIN
if [ ! -d node_modules/@agentclientprotocol/sdk ]; then
  echo "e2e: node_modules missing; run 'npm ci' in $here first" >&2
  exit 2
fi
export NPM_CONFIG_UPDATE_NOTIFIER=false

if [ "$#" -gt 0 ]; then
  exec node --test "$@"
fi
exec node --test ./*.test.mjs
