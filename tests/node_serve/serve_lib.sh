# Sourced by the runners of this folder: one `genvm-node serve` on a free port of 127.0.0.1
# over a temporary state folder, stopped (and the folder removed) when the runner exits.
#
#   start_server NAME GENVM_NODE [SERVE ARGS...]
#
# makes $dir (/tmp/genvm-serve-NAME-XXXXXX, the state is $dir/state.db), starts the server
# with --port 0 and the given arguments (environment as the caller's), waits for its
# `listening on URL` line and sets $pid and $url (http://127.0.0.1:PORT/api). A server that
# exits or does not start within 10 s ends the runner with 1 and its stderr.
# finish RC: prints the server's stderr tail unless RC is 0 or 77 (skip), then exits with RC.

start_server() {
  local name=$1 genvm_node=$2
  shift 2
  dir=$(mktemp -d "/tmp/genvm-serve-$name-XXXXXX")
  "$genvm_node" serve --port 0 --state "$dir/state.db" "$@" >"$dir/out" 2>"$dir/err" &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
  url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' "$dir/out")
    [ -n "$url" ] && return 0
    kill -0 "$pid" 2>/dev/null || { echo "genvm-node serve exited:"; cat "$dir/err"; exit 1; }
    sleep 0.1
  done
  echo "genvm-node serve did not start"
  cat "$dir/err"
  exit 1
}

finish() {
  local rc=$1
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { echo "--- server stderr"; tail -20 "$dir/err"; }
  exit "$rc"
}
