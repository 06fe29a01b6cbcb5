#!/usr/bin/env bash
# Crash: `genvm-node serve` (with the LLM module, so a module process runs under it too) on a
# free port of 127.0.0.1 with a temporary state; tests/interop/serve_crash.mjs `kill` submits
# writes and SIGKILLs the server while one is mid-round; the state must pass `genvm-node check`
# as the crash left it. A second server on the same state is killed the same way while it works
# through them (`kill-again`); a third runs `verify` (each write once, nonces kept, nothing of
# the killed servers left running), the state passes `genvm-node check` again, and the killed
# servers' socket folders (host and modules) are gone.
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
# After a kill: the server died of SIGKILL, the state passes check as left, and the socket
# folders it left (with its modules' sockets) are added to $left.
left=
after_kill() {  # $1: the server's log name
  wait "$pid" 2>/dev/null
  local rc=$?
  pid=
  [ $rc -eq 137 ] || { echo "the $1 server ended with $rc, not by SIGKILL"; tail -20 "$dir/$1.err"; exit 1; }
  # Listed before anything else runs: any node's start (check's too) sweeps what is 2 s old.
  local mine
  mine=$(cd "$TMPDIR" && for f in genvm-node-*; do [ -e "$f"/genvm-modules-*/llm.sock ] && echo "$f"; done)
  [ -n "$mine" ] || { echo "the kill of the $1 server left no socket folder with the modules' sockets (nothing to test): $(ls -R "$TMPDIR")"; exit 1; }
  left="$left $mine"
  "$genvm_node" --state "$dir/state.db" check || { echo "genvm-node check failed on the state the kill of the $1 server left"; exit 1; }
}
start_server first
"$node_js" "$here/../interop/serve_crash.mjs" kill --url "$url" --examples "$examples" --pid "$pid" --record "$dir/record.json"
rc=$?
[ $rc -eq 77 ] && exit 77  # GENVM_SKIP_NPM=1 without the npm packages
[ $rc -eq 0 ] || { echo "--- first server's stderr"; tail -20 "$dir/first.err"; exit 1; }
after_kill first
start_server second
"$node_js" "$here/../interop/serve_crash.mjs" kill-again --url "$url" --pid "$pid" --record "$dir/record.json" \
  || { echo "--- second server's stderr"; tail -20 "$dir/second.err"; exit 1; }
after_kill second
start_server third
"$node_js" "$here/../interop/serve_crash.mjs" verify --url "$url" --record "$dir/record.json"
rc=$?
if [ $rc -eq 0 ]; then
  "$genvm_node" --state "$dir/state.db" check || { echo "genvm-node check failed after the restarts"; rc=1; }
  # The running server's first runs swept the killed ones' folders, their modules' sockets with them.
  for f in $left; do
    [ ! -e "$TMPDIR/$f" ] || { echo "a killed server's folder $f is still there: $(ls -R "$TMPDIR/$f")"; rc=1; }
  done
  [ $rc -eq 0 ] && echo "the killed servers' socket folders were swept:$left"
fi
[ $rc -eq 0 ] || { echo "--- third server's stderr"; tail -20 "$dir/third.err"; }
echo "serve_crash: $(( $(date +%s) - t0 )) s"
exit $rc
