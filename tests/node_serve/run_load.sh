#!/usr/bin/env bash
# Load: `genvm-node serve` on a free port of 127.0.0.1 with a temporary state and a short
# finality window; tests/interop/serve_load.mjs has ACCOUNTS accounts write WRITES times each to
# one counter at once; then `genvm-node check` on the state. Stops the server by its pid.
#   run_load.sh GENVM_NODE NODE_JS EXAMPLES_DIR [ACCOUNTS WRITES VALIDATORS]
set -u
genvm_node=$1 node_js=$2 examples=$3 accounts=${4:-5} writes=${5:-20} validators=${6:-2}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$examples/counter.wasm" ] || { echo "no example contracts in $examples"; exit 1; }
command -v "$node_js" >/dev/null || { echo "node ($node_js) not found: the client test cannot run"; exit 1; }
source "$here/serve_lib.sh"
start_server load "$genvm_node" --finality-window 200 --validators "$validators"
start=$(date +%s)
"$node_js" "$here/../interop/serve_load.mjs" --url "$url" --examples "$examples" --accounts "$accounts" --writes "$writes"
rc=$?
[ $rc -eq 77 ] && exit 77  # GENVM_SKIP_NPM=1 without the npm packages
echo "serve_load: $(( $(date +%s) - start )) s with $validators validators"
if [ $rc -eq 0 ]; then
  "$genvm_node" --state "$dir/state.db" check || { echo "genvm-node check failed on the loaded state"; rc=1; }
fi
finish $rc
