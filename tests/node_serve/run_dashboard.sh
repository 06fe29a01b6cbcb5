#!/usr/bin/env bash
# Starts `genvm-node serve` on a free port of 127.0.0.1 with a temporary state, then drives its
# dashboard in headless Chromium (tests/interop/dashboard_browser.mjs); stops the server by its
# pid. A failed check leaves a screenshot in ARTIFACTS_DIR.
#   run_dashboard.sh GENVM_NODE NODE_JS CHROMIUM EXAMPLES_DIR ARTIFACTS_DIR
set -u
genvm_node=$1 node_js=$2 chromium=$3 examples=$4 artifacts=$5
here=$(cd "$(dirname "$0")" && pwd)
command -v "$node_js" >/dev/null || { echo "no node ('$node_js'): the dashboard test needs node.js"; exit 1; }
command -v "$chromium" >/dev/null || { echo "no Chromium ('$chromium'): the dashboard test needs Debian's chromium"; exit 1; }
chromium=$(command -v "$chromium")
[ -f "$examples/listener.wasm" ] || { echo "no example contracts in $examples"; exit 1; }
dir=$(mktemp -d /tmp/genvm-serve-dashboard-XXXXXX)
"$genvm_node" serve --port 0 --state "$dir/state.db" --finality-window 500 >"$dir/out" 2>"$dir/err" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
url=
for _ in $(seq 100); do
  url=$(sed -n 's/^listening on \(http:[^ ]*\)\/api$/\1\//p' "$dir/out")
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "genvm-node serve exited:"; cat "$dir/err"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "genvm-node serve did not start"; cat "$dir/err"; exit 1; }
"$node_js" "$here/../interop/dashboard_browser.mjs" --url "$url" --chromium "$chromium" --examples "$examples" \
  --artifacts "$artifacts"
rc=$?
[ $rc -eq 0 ] || { echo "--- server stderr"; tail -20 "$dir/err"; }
exit $rc
