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
source "$here/serve_lib.sh"
start_server dashboard "$genvm_node" --finality-window 500
url=${url%api}  # the page: http://127.0.0.1:PORT/
"$node_js" "$here/../interop/dashboard_browser.mjs" --url "$url" --chromium "$chromium" --examples "$examples" \
  --artifacts "$artifacts"
rc=$?
finish $rc
