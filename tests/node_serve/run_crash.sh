#!/usr/bin/env bash
# Crash: `genvm-node serve` (with the LLM module, so a module process runs under it too) on a
# free port of 127.0.0.1 with a temporary state; tests/interop/serve_crash.mjs `kill` submits
# writes and SIGKILLs the server while one is mid-round; then the state must pass
# `genvm-node check` as the crash left it; a new server on the same state runs
# serve_crash.mjs `verify` (each write once, nonces kept, nothing of the killed server left
# running) and the state passes `genvm-node check` again, and the killed server's socket
# folders (host and modules) are gone.
#   run_crash.sh GENVM_NODE NODE_JS EXAMPLES_DIR
set -u
genvm_node=$1 node_js=$2 examples=$3
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$examples/counter.wasm" ] || { echo "no example contracts in $examples"; exit 1; }
command -v "$node_js" >/dev/null || { echo "node ($node_js) not found: the client test cannot run"; exit 1; }
dir=$(mktemp -d /tmp/genvm-serve-crash-XXXXXX)
# The servers' socket folders (host and modules) in a TMPDIR of our own, to see what a kill leaves.
mkdir "$dir/tmp"
export TMPDIR="$dir/tmp"
# The LLM module with a backend nobody serves: the counter never calls it, but every run gets a
# connection to the module process, which must end with the server.
cat >"$dir/llm.yaml" <<'YAML'
retries: 0
backends:
  none:
    host: http://127.0.0.1:9
    provider: openai-compatible
    key: ''
    models:
      none: {}
prompt_templates:
  eq_comparative: {system: s, user: "#{leader_answer} #{validator_answer} #{principle}"}
  eq_non_comparative_leader: {system: s, user: "#{task} #{criteria} #{input}"}
  eq_non_comparative_validator: {system: s, user: "#{task} #{input} #{criteria} #{output}"}
YAML
pid=
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$dir"; }
trap cleanup EXIT
start_server() {  # $1: log name; sets pid and url
  "$genvm_node" serve --port 0 --state "$dir/state.db" --finality-window 300 --module-llm-config "$dir/llm.yaml" \
    >"$dir/$1.out" 2>"$dir/$1.err" &
  pid=$!
  url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$dir/$1.out")
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || { echo "genvm-node serve exited:"; cat "$dir/$1.err"; exit 1; }
    sleep 0.1
  done
  echo "genvm-node serve did not start"; cat "$dir/$1.err"; exit 1
}
t0=$(date +%s)
start_server first
"$node_js" "$here/../interop/serve_crash.mjs" kill --url "$url" --examples "$examples" --pid "$pid" --record "$dir/record.json" \
  || { echo "--- first server's stderr"; tail -20 "$dir/first.err"; exit 1; }
wait "$pid" 2>/dev/null
rc=$?
pid=
[ $rc -eq 137 ] || { echo "the first server ended with $rc, not by SIGKILL"; exit 1; }
left=$(cd "$TMPDIR" && ls -d genvm-node-* 2>/dev/null)
[ -n "$left" ] && [ -n "$(cd "$TMPDIR" && ls -d genvm-node-*/genvm-modules-*/llm.sock 2>/dev/null)" ] ||
  { echo "the kill left no socket folder with the modules' sockets (nothing to test): $(ls -R "$TMPDIR")"; exit 1; }
"$genvm_node" --state "$dir/state.db" check || { echo "genvm-node check failed on the state the kill left"; exit 1; }
start_server second
"$node_js" "$here/../interop/serve_crash.mjs" verify --url "$url" --record "$dir/record.json"
rc=$?
if [ $rc -eq 0 ]; then
  "$genvm_node" --state "$dir/state.db" check || { echo "genvm-node check failed after the restart"; rc=1; }
  # The restarted server's runs swept the killed one's folders, its modules' sockets with them.
  for f in $left; do
    [ ! -e "$TMPDIR/$f" ] || { echo "the killed server's folder $f is still there: $(ls -R "$TMPDIR/$f")"; rc=1; }
  done
  [ $rc -eq 0 ] && echo "the killed server's socket folders were swept: $left"
fi
[ $rc -eq 0 ] || { echo "--- restarted server's stderr"; tail -20 "$dir/second.err"; }
echo "serve_crash: $(( $(date +%s) - t0 )) s"
exit $rc
