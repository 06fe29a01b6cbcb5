#!/usr/bin/env bash
# Starts `genvm-node serve` on a free port of 127.0.0.1 with a temporary state, the build's
# Python runners and --debug-mode safe (runs keep their stdout and stderr), runs the `genlayer`
# CLI's commands against it (tests/interop/cli_interop.mjs) on examples/python/storage.py and
# printer.py (here), stops the server by its pid.
#   run_cli.sh GENVM_NODE NODE_JS RUNNERS_DIR
# The contracts depend on py-genlayer:latest, which a node resolves only in debug mode unsafe
# (docs/PROTOCOLS.md, Runners); the deployed copies name the installed runner's id instead, as a
# contract for a production node does.
set -u
genvm_node=$1 node_js=$2 runners=$3
here=$(cd "$(dirname "$0")" && pwd)
example="$here/../../examples/python/storage.py"
[ -f "$runners/latest.json" ] || { echo "no Python runners in $runners (target cpython_runners)"; exit 1; }
id=$(sed -n 's/.*"py-genlayer": *"\([0-9a-z]*\)".*/\1/p' "$runners/latest.json")
[ -n "$id" ] || { echo "$runners/latest.json names no py-genlayer runner"; exit 1; }
source "$here/serve_lib.sh"
GENVM_RUNNERS_DIR="$runners" start_server cli "$genvm_node" --finality-window 500 --debug-mode safe
for src in "$example" "$here/printer.py"; do
  grep -q '^# { "Depends": "py-genlayer:latest" }$' "$src" || { echo "$src: header changed"; exit 1; }
  sed "s/^# { \"Depends\": \"py-genlayer:latest\" }\$/# { \"Depends\": \"py-genlayer:$id\" }/" "$src" >"$dir/$(basename "$src")"
done
"$node_js" "$here/../interop/cli_interop.mjs" --url "$url" --contract "$dir/storage.py" --printer "$dir/printer.py"
rc=$?
if [ $rc -eq 0 ]; then
  "$genvm_node" --state "$dir/state.db" check >/dev/null || { echo "genvm-node check failed on the served state"; rc=1; }
fi
finish $rc
