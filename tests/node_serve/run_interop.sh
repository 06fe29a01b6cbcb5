#!/usr/bin/env bash
# Starts `genvm-node serve` on a free port of 127.0.0.1 with a temporary state, runs the
# genlayer-js script against it (tests/interop/serve_interop.mjs), stops the server by its pid.
#   run_interop.sh GENVM_NODE NODE_JS EXAMPLES_DIR
set -u
genvm_node=$1 node_js=$2 examples=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$examples/counter.wasm" ] && [ -f "$examples/listener.wasm" ] || { echo "no example contracts in $examples"; exit 1; }
source "$here/serve_lib.sh"
start_server interop "$genvm_node" --finality-window 500
"$node_js" "$here/../interop/serve_interop.mjs" --url "$url" --examples "$examples"
rc=$?
if [ $rc -eq 0 ]; then
  # The CLI keeps working on the file while the server runs.
  "$genvm_node" --state "$dir/state.db" check >/dev/null || { echo "genvm-node check failed on the served state"; rc=1; }
  "$genvm_node" --state "$dir/state.db" contracts | head -3
fi
finish $rc
