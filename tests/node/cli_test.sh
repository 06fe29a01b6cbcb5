#!/usr/bin/env bash
# genvm-node's command line: happy path through real executors, then every kind of bad input
# gives exit 1 and exactly one line on stderr.
set -uo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
ex="$b/examples"
dir=$(mktemp -d /tmp/genvm-node-cli-XXXXXX)
trap 'rm -rf "$dir"; [ -n "${locker:-}" ] && kill "$locker" 2>/dev/null' EXIT
db="$dir/s.db"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_error NAME CMD...: exit 1, one stderr line starting "genvm-node: ", nothing on stdout.
expect_error() {
  local name="$1"; shift
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$dir/err")
  if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && grep -q '^genvm-node: ' "$dir/err" && [ ! -s "$dir/out" ]; then
    ok
  else
    bad "$name: rc=$rc, $lines stderr lines: $(head -3 "$dir/err")"
  fi
}

"$node" --help | grep -q '^usage: genvm-node' && ok || bad "--help"

# Happy path: deploy, call, view, tx, state, check.
addr=$("$node" --state "$db" --validators 2 --json deploy "$ex/counter.wasm" 2>/dev/null |
  sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p')
[ ${#addr} -eq 42 ] && ok || bad "deploy printed no address"
out=$("$node" --state "$db" --validators 2 --json call "$addr" add 7 2>/dev/null)
echo "$out" | grep -q '"status":"accepted","result_kind":"Return","result":"7"' && ok || bad "call add 7: $out"
[ "$("$node" --state "$db" view "$addr" get)" = "Return 7" ] && ok || bad "view get"
"$node" --state "$db" tx 2 | grep -q 'entry: *{"": "add", "args": \[7\]}' && ok || bad "tx 2"
"$node" --state "$db" state "$addr" | grep -q 'deployed by 0x00000000000000000000000000000000000000a1 in tx 1' && ok || bad "state"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check"
# The human table names every validator's vote.
"$node" --state "$db" --validators 3 call "$addr" increment 2>"$dir/progress" >"$dir/table"
[ "$(grep -c '  agree ' "$dir/table")" -eq 3 ] && ok || bad "vote table: $(cat "$dir/table")"
grep -q 'validators 3/3 done' "$dir/progress" && ok || bad "progress line"

[ "$("$node" --state "$db" tx 2 | grep -c '  agree ')" -eq 2 ] && ok || bad "tx 2 vote table"
# An executor that delivers nothing: every round fails, the transaction is undetermined and
# changes nothing (the counter stays at 8).
out=$("$node" --state "$db" --genvm /bin/false --rounds 2 --json call "$addr" increment 2>/dev/null)
echo "$out" | grep -q '"status":"undetermined"' && ok || bad "undetermined: $out"
[ "$("$node" --state "$db" view "$addr" get)" = "Return 8" ] && ok || bad "undetermined changed state"

# Value: funded from the faucet, moved to the contract with an accepted Return.
me=0x00000000000000000000000000000000000000a1
"$node" --state "$db" fund "$me" 100 >/dev/null && ok || bad "fund"
out=$("$node" --state "$db" --validators 2 --value 30 --json call "$addr" increment 2>/dev/null)
echo "$out" | grep -q '"value":30,"status":"accepted","result_kind":"Return"' && ok || bad "call with value: $out"
"$node" --state "$db" state "$addr" | grep -qx '  balance: 30' && ok || bad "contract balance"
"$node" --state "$db" state "$me" | grep -qx '  balance: 70' && ok || bad "sender balance"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after value"

# A posted message's value reaches a contract target with the follow-up's accepted Return: the
# sink (as sender) pays 10 into events' pay(3), which posts 3 back to the sink.
if [ -e "$b/tests/node/sink.wasm" ]; then
  sink=$("$node" --state "$db" --validators 1 --json deploy "$b/tests/node/sink.wasm" 2>/dev/null |
    sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p')
  events=$("$node" --state "$db" --validators 1 --json deploy "$ex/events.wasm" 2>/dev/null |
    sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p')
  "$node" --state "$db" fund "$sink" 10 >/dev/null
  out=$("$node" --state "$db" --validators 2 --from "$sink" --value 10 --json call "$events" pay 3 2>/dev/null)
  echo "$out" | grep -q '"result_kind":"Return","result":"7"' && ok || bad "pay with value: $out"
  fu=$(echo "$out" | sed -n 's/.*"follow_ups":\[\([0-9]*\).*/\1/p')
  "$node" --state "$db" --json tx "${fu:-0}" 2>/dev/null | grep -q '"value":3,' && ok || bad "follow-up value"
  "$node" --state "$db" state "$sink" | grep -qx '  balance: 3' && ok || bad "sink balance: $("$node" --state "$db" state "$sink")"
  "$node" --state "$db" state "$events" | grep -qx '  balance: 7' && ok || bad "events balance"
  "$node" --state "$db" check | grep -qx consistent && ok || bad "check after message value"
else
  bad "no $b/tests/node/sink.wasm (build target genvm_node_test_contracts)"
fi

# Bad inputs.
printf 'not wasm' >"$dir/junk.wasm"
expect_error "malformed wasm" "$node" --state "$db" deploy "$dir/junk.wasm"
expect_error "missing file" "$node" --state "$db" deploy "$dir/nope.wasm"
expect_error "unknown address" "$node" --state "$db" call 0x00000000000000000000000000000000000000ee get
expect_error "unknown address view" "$node" --state "$db" view 0x00000000000000000000000000000000000000ee get
expect_error "unknown address state" "$node" --state "$db" state 0x00000000000000000000000000000000000000ee
expect_error "bad address" "$node" --state "$db" call 0x1234 get
expect_error "malformed args" "$node" --state "$db" call "$addr" add '[1,'
expect_error "malformed args 0x" "$node" --state "$db" call "$addr" add 0x10
expect_error "unknown tx" "$node" --state "$db" tx 999
expect_error "bad tx id" "$node" --state "$db" tx abc
expect_error "unknown command" "$node" --state "$db" frobnicate
expect_error "unknown option" "$node" --bogus
expect_error "no command" "$node"
expect_error "bad validators" "$node" --validators 0 check
expect_error "insufficient balance" "$node" --state "$db" --value 1000 call "$addr" increment
expect_error "bad value" "$node" --state "$db" --value -1 call "$addr" increment
expect_error "bad fund amount" "$node" --state "$db" fund "$me" 0
expect_error "bad fund address" "$node" --state "$db" fund 0x12 5
expect_error "missing executor" "$node" --state "$db" --genvm "$dir/none" call "$addr" get
expect_error "unreadable state" "$node" --state "$dir/no/such/dir/s.db" check

# A database another process holds locked: one clear line, quickly.
python3 - "$db" "$dir/locked" <<'PY' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(30)
PY
locker=$!
for _ in $(seq 100); do [ -e "$dir/locked" ] && break; sleep 0.1; done
expect_error "locked database" "$node" --state "$db" call "$addr" increment
grep -q 'locked' "$dir/err" && ok || bad "locked message: $(cat "$dir/err")"
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null
locker=

# The nonce only moved for the transactions that were committed.
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after errors"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
