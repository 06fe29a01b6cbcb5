#!/usr/bin/env bash
# Kill genvm-node with SIGKILL at random moments of many transactions: the database must always
# pass `genvm-node check`, and the counter must equal the number of increments that were
# committed — a transaction's storage change and its receipt land together or not at all.
# Bounded: 24 kills, each at most 0.2 s after the start (a transaction with 2 validators takes
# about 0.15 s here; a loaded machine stretches it, which only moves kills earlier), so well
# under 30 s.
set -uo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
dir=$(mktemp -d /tmp/genvm-node-kill9-XXXXXX)
trap 'rm -rf "$dir"' EXIT
db="$dir/s.db"
n() { "$node" --state "$db" --validators 2 "$@"; }
addr=$(n --json deploy "$b/examples/counter.wasm" 2>/dev/null | sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p')
[ ${#addr} -eq 42 ] || { echo "deploy failed"; echo "0 passed, 1 failed"; exit 1; }
pass=0
fail=0
RANDOM=42  # a fixed schedule, so a failure can be replayed
for i in $(seq 24); do
  # The node itself must be the background job ($! is its pid), not a shell around it.
  "$node" --state "$db" --validators 2 call "$addr" increment >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 2))$((RANDOM % 10))$((RANDOM % 10))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if n check >/dev/null 2>"$dir/err"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL after kill $i: $(cat "$dir/err")"; fi
done
# Count the accepted increments from the receipts and compare with the stored counter.
accepted=0
id=2
while out=$(n --json tx "$id" 2>/dev/null); do
  case "$out" in *'"status":"accepted","result_kind":"Return"'*) accepted=$((accepted + 1)) ;; esac
  id=$((id + 1))
done
value=$(n view "$addr" get)
if [ "$value" = "Return $accepted" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: counter is '$value' but $accepted increments were committed"
fi
echo "killed 24 times; $accepted of 24 increments committed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
