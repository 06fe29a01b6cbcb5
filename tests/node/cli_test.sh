#!/usr/bin/env bash
# genvm-node's command line end to end through real executors: every command, flag and exit
# code (0 Return, 1 node failure, 2 bad input, 3 contract error, 4 not accepted, 130/143
# interrupted), what a validator's rejecting non-deterministic block, a failed deploy and a
# timeout look like, readers while a write transaction runs, and every kind of bad input: its
# exit code and exactly one line on stderr.
set -uo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
ex="$b/examples"
tn="$b/tests/node"
dir=$(mktemp -d /tmp/genvm-node-cli-XXXXXX)
trap 'rm -rf "$dir"; [ -n "${locker:-}" ] && kill "$locker" 2>/dev/null; [ -n "${writer:-}" ] && kill "$writer" 2>/dev/null' EXIT
db="$dir/s.db"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
for f in "$tn/devloop.wasm" "$tn/sink.wasm" "$tn/bad_import.wasm" "$tn/start_param.wasm"; do
  [ -e "$f" ] || { echo "FAIL: no $f (build target genvm_node_test_contracts)"; echo "0 passed, 1 failed"; exit 1; }
done

# expect_error NAME CODE CMD...: exit CODE, one stderr line starting "genvm-node: ", nothing on stdout.
expect_error() {
  local name="$1" want="$2"; shift 2
  "$@" >"$dir/out" 2>"$dir/err" </dev/null
  local rc=$?
  local lines
  lines=$(wc -l <"$dir/err")
  if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -q '^genvm-node: ' "$dir/err" && [ ! -s "$dir/out" ]; then
    ok
  else
    bad "$name: rc=$rc (want $want), $lines stderr lines: $(head -3 "$dir/err" | cut -c1-300)"
  fi
}
# expect_rc NAME CODE CMD...: exit CODE; stdout in $dir/out, stderr in $dir/err.
expect_rc() {
  local name="$1" want="$2"; shift 2
  "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || bad "$name: rc=$rc (want $want): $(head -5 "$dir/out" "$dir/err" | cut -c1-300)"
}
address_of() { sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p'; }

# Read once: grep -q on a pipe could exit before a help text longer than one stdio buffer is written.
help=$("$node" --help)
grep -q '^usage: genvm-node' <<<"$help" && ok || bad "--help"
for word in 'exit status' '  3    contract error' '  4    not accepted' 'default 5' '@FILE' 'b@FILE' '0x<40 hex>' \
  '--debug-mode LEVEL' '16 KiB' '1 MiB per transaction' '--limit N' '--offset N' '--bytes N' 'txs [ADDRESS]' \
  'storage ADDRESS' 'schema ADDRESS' '#get-schema'; do
  grep -qF -- "$word" <<<"$help" && ok || bad "--help does not say '$word'"
done

# Happy path: deploy, call, view, tx, state, check.
addr=$("$node" --state "$db" --validators 2 --json deploy "$ex/counter.wasm" 2>/dev/null | address_of)
[ ${#addr} -eq 42 ] && ok || bad "deploy printed no address"
out=$("$node" --state "$db" --validators 2 --json call "$addr" add 7 2>/dev/null)
echo "$out" | grep -q '"status":"accepted","result_kind":"Return","result":"7"' && ok || bad "call add 7: $out"
echo "$out" | grep -q '"outcome":"return","exit_code":0}' && ok || bad "call --json exit_code: $out"
[ "$("$node" --state "$db" view "$addr" get)" = "Return 7" ] && ok || bad "view get"
"$node" --state "$db" --json view "$addr" get | grep -q '"result_kind":"Return","result":"7","outcome":"return","exit_code":0' &&
  ok || bad "view --json"
"$node" --state "$db" tx 2 | grep -q 'entry: *{"": "add", "args": \[7\]}' && ok || bad "tx 2"
"$node" --state "$db" --json tx 2 | grep -q '"exit_code":0}$' && ok || bad "tx --json exit_code"
"$node" --state "$db" state "$addr" | grep -q 'deployed by 0x00000000000000000000000000000000000000a1 in tx 1' && ok || bad "state"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check"
"$node" --state "$db" --json check | grep -qx '{"consistent":true,"exit_code":0}' && ok || bad "check --json"
# The human table names every validator's vote; the progress line counts real runs.
"$node" --state "$db" --validators 3 call "$addr" increment 2>"$dir/progress" >"$dir/table"
[ "$(grep -c '  agree ' "$dir/table")" -eq 3 ] && ok || bad "vote table: $(cat "$dir/table")"
grep -q 'round 1: leader node 0 done, validators 3/3 done' "$dir/progress" && ok || bad "progress line: $(cat "$dir/progress")"
grep -q 'a leader and 3 validators, 5 s per run' "$dir/progress" && ok || bad "progress header: $(cat "$dir/progress")"
[ "$("$node" --state "$db" tx 2 | grep -c '  agree ')" -eq 2 ] && ok || bad "tx 2 vote table"

# Exit 3: an accepted UserError (the call) and a viewed one.
expect_rc "call UserError" 3 "$node" --state "$db" --validators 1 call "$addr" nosuch
grep -q '^  result: UserError' "$dir/out" && ok || bad "call UserError line: $(cat "$dir/out")"
expect_rc "call UserError --json" 3 "$node" --state "$db" --validators 1 --json call "$addr" nosuch
grep -q '"outcome":"contract_error","exit_code":3}' "$dir/out" && ok || bad "UserError --json: $(cat "$dir/out")"
expect_rc "view UserError" 3 "$node" --state "$db" view "$addr" nosuch

# Exit 4: an executor that delivers nothing: every round fails, the transaction is undetermined
# and changes nothing (the counter stays at 8); each round says its leader delivered nothing.
expect_rc "undetermined" 4 "$node" --state "$db" --genvm /bin/false --rounds 2 --json call "$addr" increment
grep -q '"status":"undetermined"' "$dir/out" && ok || bad "undetermined: $(cat "$dir/out")"
grep -q '"leader_outcome":"error"' "$dir/out" && ok || bad "undetermined leader_outcome: $(cat "$dir/out")"
grep -q '"outcome":"not_accepted","exit_code":4}' "$dir/out" && ok || bad "undetermined --json exit: $(cat "$dir/out")"
[ "$("$node" --state "$db" view "$addr" get)" = "Return 8" ] && ok || bad "undetermined changed state"
expect_rc "undetermined text" 4 "$node" --state "$db" --genvm /bin/false --rounds 1 call "$addr" increment
grep -q 'undetermined after 1 round: no majority, nothing changed' "$dir/out" && ok || bad "undetermined line: $(cat "$dir/out")"
grep -q 'leader node 0 -> error (delivered no result); no validators ran' "$dir/out" && ok || bad "no-result round: $(cat "$dir/out")"
grep -q 'validators [0-9]*/[0-9]* done' "$dir/err" && bad "progress counted validators that never ran: $(cat "$dir/err")" || ok
grep -q 'round 1: leader node 0 delivered no result, no validators ran' "$dir/err" && ok || bad "no-result progress: $(cat "$dir/err")"

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
sink=$("$node" --state "$db" --validators 1 --json deploy "$tn/sink.wasm" 2>/dev/null | address_of)
events=$("$node" --state "$db" --validators 1 --json deploy "$ex/events.wasm" 2>/dev/null | address_of)
"$node" --state "$db" fund "$sink" 10 >/dev/null
out=$("$node" --state "$db" --validators 2 --from "$sink" --value 10 --json call "$events" pay 3 2>/dev/null)
echo "$out" | grep -q '"result_kind":"Return","result":"7"' && ok || bad "pay with value: $out"
fu=$(echo "$out" | sed -n 's/.*"follow_ups":\[\([0-9]*\).*/\1/p')
"$node" --state "$db" --json tx "${fu:-0}" 2>/dev/null | grep -q '"value":3,' && ok || bad "follow-up value"
"$node" --state "$db" state "$sink" | grep -qx '  balance: 3' && ok || bad "sink balance: $("$node" --state "$db" state "$sink")"
"$node" --state "$db" state "$events" | grep -qx '  balance: 7' && ok || bad "events balance"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after message value"

# A validator whose non-deterministic block rejects the leader's answer votes disagree, whatever
# its execution hash, and the receipt names the block (call_no 1, the second block).
dl=$("$node" --state "$db" --validators 1 --json deploy "$tn/devloop.wasm" 2>/dev/null | address_of)
[ ${#dl} -eq 42 ] && ok || bad "deploy devloop"
expect_rc "disagree" 4 "$node" --state "$db" --validators 3 --rounds 1 --json call "$dl" disagree
grep -q '"status":"undetermined"' "$dir/out" && ok || bad "disagree accepted: $(cat "$dir/out")"
[ "$(grep -o '"vote":"disagree","kind":"Return","execution_hash":"[0-9a-f]*","nondet_disagreement":1}' "$dir/out" | wc -l)" -eq 3 ] &&
  ok || bad "disagree votes: $(cat "$dir/out")"
disagree_tx=$(sed -n 's/^{"tx":\([0-9]*\).*/\1/p' "$dir/out")
"$node" --state "$db" tx "$disagree_tx" >"$dir/out"
[ "$(grep -c 'disagree .*non-deterministic block 1 rejected the leader' "$dir/out")" -eq 3 ] && ok || bad "tx disagree table: $(cat "$dir/out")"
grep -q '0/3 agree -> rejected' "$dir/out" && ok || bad "tx disagree count: $(cat "$dir/out")"
expect_rc "agree" 0 "$node" --state "$db" --validators 3 --rounds 1 --json call "$dl" agree
[ "$(grep -o '"vote":"agree"[^}]*"nondet_disagreement":null}' "$dir/out" | wc -l)" -eq 3 ] && ok || bad "agree votes: $(cat "$dir/out")"

# --debug-mode: nothing is kept at disabled (the default); from safe up each run's stdout,
# stderr and log are kept with the receipt, leader and validators, and shown by tx (--json
# "debug"); gl_trace lines appear from safe-unbounded up (where the executor emits them); the
# kept tails are bounded (16 KiB per stream); a view prints its record on stderr.
tx_of() { sed -n 's/^{"tx":\([0-9]*\).*/\1/p' "$dir/out"; }
expect_rc "chatty, debug disabled" 0 "$node" --state "$db" --validators 1 --json call "$dl" chatty
quiet_tx=$(tx_of)
"$node" --state "$db" tx "$quiet_tx" | grep -q 'debug\|hello from' && bad "debug kept at disabled" || ok
"$node" --state "$db" --json tx "$quiet_tx" | grep -q '"debug":\[\],"exit_code":0}$' && ok || bad "tx --json debug at disabled"
expect_rc "chatty, debug safe" 0 "$node" --state "$db" --validators 2 --debug-mode safe --json call "$dl" chatty
grep -q '"result":"7"' "$dir/out" && ok || bad "chatty result: $(cat "$dir/out")"
safe_tx=$(tx_of)
"$node" --state "$db" tx "$safe_tx" >"$dir/out"
grep -q '^  debug (safe): 3 runs$' "$dir/out" && ok || bad "debug header: $(cat "$dir/out")"
grep -q '^    round 1 leader node 0: exit 0, stdout 18 B, stderr 18 B, [0-9]* log entries$' "$dir/out" && ok ||
  bad "debug leader line: $(cat "$dir/out")"
[ "$(grep -c '^    round 1 validator node [12]: exit 0' "$dir/out")" -eq 2 ] && ok || bad "debug validator lines: $(cat "$dir/out")"
[ "$(grep -c '^      stdout | hello from stdout$' "$dir/out")" -eq 3 ] && ok || bad "debug stdout lines: $(cat "$dir/out")"
[ "$(grep -c '^      stderr | hello from stderr$' "$dir/out")" -eq 3 ] && ok || bad "debug stderr lines: $(cat "$dir/out")"
grep -q '^      log    | info genvm::' "$dir/out" && ok || bad "debug log lines: $(cat "$dir/out")"
grep -q 'trace  |' "$dir/out" && bad "a trace at safe (the executor emits them from safe-unbounded)" || ok
"$node" --state "$db" --json tx "$safe_tx" >"$dir/out"
[ "$(grep -o '"role":"validator"' "$dir/out" | wc -l)" -eq 2 ] && grep -q '"role":"leader","debug_mode":"safe","exit_code":0' "$dir/out" &&
  grep -q '"stdout":"hello from stdout\\n","stderr":"hello from stderr\\n"' "$dir/out" && ok || bad "tx --json debug: $(cut -c1-600 "$dir/out")"
expect_rc "chatty, debug safe-unbounded" 0 "$node" --state "$db" --validators 1 --debug-mode safe-unbounded --json call "$dl" chatty
trace_tx=$(tx_of)
[ "$("$node" --state "$db" tx "$trace_tx" | grep -c '^      trace  | tracing 42$')" -eq 2 ] && ok || bad "trace lines: $("$node" --state "$db" tx "$trace_tx")"
"$node" --state "$db" --json tx "$trace_tx" | grep -q '"traces":\["tracing 42"\]' && ok || bad "tx --json traces"
expect_rc "loud, debug safe" 0 "$node" --state "$db" --validators 1 --debug-mode safe --json call "$dl" loud
loud_tx=$(tx_of)
"$node" --state "$db" tx "$loud_tx" >"$dir/out"
[ "$(grep -c '^      stdout | ... (the first 23616 bytes were not kept)$' "$dir/out")" -eq 2 ] && ok || bad "stdout bound: $(head -20 "$dir/out")"
[ "$(grep -c '^      stdout | x' "$dir/out")" -le 330 ] && ok || bad "more than 16 KiB of stdout kept"
"$node" --state "$db" --json tx "$loud_tx" | grep -q '"stdout_bytes":40000,' && ok || bad "stdout_bytes"
expect_rc "escape, debug safe" 0 "$node" --state "$db" --validators 1 --debug-mode safe --json call "$dl" escape
"$node" --state "$db" tx "$(tx_of)" >"$dir/out"
grep -q "$(printf '\x1b')" "$dir/out" && bad "a contract's escape sequence reached the terminal" || ok
[ "$(grep -cxF '      stdout | .[2Jcleared' "$dir/out")" -eq 2 ] && ok || bad "escaped stdout: $(cat -v "$dir/out" | tail -8)"
expect_rc "undetermined, debug safe" 4 "$node" --state "$db" --genvm /bin/false --rounds 2 --debug-mode safe call "$dl" chatty
"$node" --state "$db" tx "$(sed -n 's/^tx \([0-9]*\) .*/\1/p' "$dir/out")" | grep -q '^  debug (safe): 2 runs$' && ok ||
  bad "undetermined transaction's debug records"
[ "$("$node" --state "$db" --debug-mode safe view "$dl" chatty 2>"$dir/err")" = "Return 7" ] && ok || bad "view with debug: stdout"
grep -q '^      stdout | hello from stdout$' "$dir/err" && grep -q '^    view: exit 0' "$dir/err" && ok || bad "view debug on stderr: $(cat "$dir/err")"
"$node" --state "$db" view "$dl" chatty 2>"$dir/err" >/dev/null
[ ! -s "$dir/err" ] && ok || bad "view printed debug at disabled: $(cat "$dir/err")"
"$node" --state "$db" --debug-mode safe --json view "$dl" chatty | grep -q '"debug":{"round":0,"node":0,"role":"view"' && ok ||
  bad "view --json debug"
expect_error "bad debug mode" 2 "$node" --state "$db" --debug-mode loud view "$dl" chatty
grep -q 'disabled, safe, safe-unbounded, unsafe, unsafe-tracing' "$dir/err" && ok || bad "bad debug mode message: $(cat "$dir/err")"
expect_error "debug mode without a level" 2 "$node" --debug-mode
grep -q '^genvm-node: --debug-mode needs one of' "$dir/err" && ok || bad "debug mode without a level message: $(cat "$dir/err")"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after debug records"

# schema: the contract's #get-schema method (the GenVM ABI), its methods listed; a contract
# without one says so (exit 3).
expect_rc "schema" 0 "$node" --state "$db" schema "$dl"
grep -qx "schema of $dl (#get-schema)" "$dir/out" && ok || bad "schema head: $(cat "$dir/out")"
grep -qx '  ctor()' "$dir/out" && grep -qx '  view  echo(x: any) -> any' "$dir/out" && grep -qx '  write chatty() -> int' "$dir/out" &&
  grep -qx '  write agree() -> bytes  (payable)' "$dir/out" && ok || bad "schema methods: $(cat "$dir/out")"
"$node" --state "$db" --json schema "$dl" | grep -q '^{"address":"'"$dl"'","schema":{"ctor":{"params":\[\],"kwparams":{}},"methods":{"echo":' &&
  ok || bad "schema --json"
expect_error "schema missing" 3 "$node" --state "$db" schema "$addr"
grep -q "$addr exposes no schema: its #get-schema method answered UserError" "$dir/err" && ok || bad "no-schema message: $(cat "$dir/err")"
expect_error "schema unknown address" 2 "$node" --state "$db" schema 0x00000000000000000000000000000000000000ee
grep -qx 'genvm-node: no contract at 0x00000000000000000000000000000000000000ee' "$dir/err" && ok || bad "schema unknown message: $(cat "$dir/err")"
expect_error "schema usage" 2 "$node" --state "$db" schema

# Listings: contracts (oldest first) and txs (newest first) with --limit / --offset; txs ADDRESS.
"$node" --state "$db" --validators 1 deploy "$ex/token.wasm" >/dev/null 2>&1  # a failed deploy to list
count_rows() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$1"; }
ncontracts=$(count_rows 'select count(*) from contracts')
ntxs=$(count_rows 'select count(*) from transactions')
expect_rc "contracts" 0 "$node" --state "$db" contracts
grep -qx "$ncontracts contracts (showing 1-$ncontracts)" "$dir/out" && ok || bad "contracts head: $(head -2 "$dir/out")"
sed -n 2p "$dir/out" | grep -q "^  $addr  tx 1  code sha3 [0-9a-f]\{16\}…  [0-9]* slots, [0-9]* bytes, 0 events$" && ok ||
  bad "contracts first row: $(sed -n 2p "$dir/out")"
[ "$(grep -c '^  0x' "$dir/out")" -eq "$ncontracts" ] && ok || bad "contracts rows"
expect_rc "contracts page" 0 "$node" --state "$db" --limit 1 --offset 1 contracts
grep -qx "$ncontracts contracts (showing 2-2)" "$dir/out" && grep -qx "  ... $((ncontracts - 2)) more: --offset 2" "$dir/out" &&
  [ "$(grep -c '^  0x' "$dir/out")" -eq 1 ] && ok || bad "contracts page: $(cat "$dir/out")"
"$node" --state "$db" --json --limit 2 contracts | grep -q '^{"total":'"$ncontracts"',"offset":0,"limit":2,"contracts":\[{"address":"'"$addr"'"' &&
  ok || bad "contracts --json"
expect_rc "txs" 0 "$node" --state "$db" --limit 3 txs
grep -qx "$ntxs transactions (showing 1-3, newest first)" "$dir/out" && ok || bad "txs head: $(head -1 "$dir/out")"
sed -n 2p "$dir/out" | grep -q "^  tx $ntxs  " && sed -n 4p "$dir/out" | grep -q "^  tx $((ntxs - 2))  " && ok || bad "txs order: $(cat "$dir/out")"
grep -qx "  ... $((ntxs - 3)) more: --offset 3" "$dir/out" && ok || bad "txs next page: $(cat "$dir/out")"
"$node" --state "$db" --limit 1000 txs >"$dir/out"
grep -q '^  tx 2  call    '"$addr"'  accepted  Return 7$' "$dir/out" && ok || bad "txs row of tx 2"
grep -q '^  tx [0-9]*  deploy  (no contract created)  accepted  UserError "' "$dir/out" && ok || bad "txs row of a failed deploy"
"$node" --state "$db" --offset "$ntxs" txs | grep -qx "$ntxs transactions (none after --offset $ntxs)" && ok || bad "txs past the end"
"$node" --state "$db" txs "$sink" >"$dir/out"
grep -q "^$sink: [0-9]* transactions (showing" "$dir/out" && ! grep '^  tx' "$dir/out" | grep -qv "$sink\|$events" && ok ||
  bad "txs ADDRESS: $(cat "$dir/out")"
"$node" --state "$db" --json --limit 1 txs | grep -q '^{"total":'"$ntxs"',"offset":0,"limit":1,"transactions":\[{"tx":'"$ntxs"',' && ok ||
  bad "txs --json"
expect_error "bad limit" 2 "$node" --state "$db" --limit 0 txs
grep -qx 'genvm-node: --limit needs a number from 1 to 1000' "$dir/err" && ok || bad "bad limit message: $(cat "$dir/err")"
expect_error "limit too big" 2 "$node" --state "$db" --limit 1001 contracts
expect_error "bad offset" 2 "$node" --state "$db" --offset -1 txs
grep -qx 'genvm-node: --offset needs a number from 0 to 2^63-1' "$dir/err" && ok || bad "bad offset message: $(cat "$dir/err")"
expect_error "contracts usage" 2 "$node" --state "$db" contracts extra
grep -qx 'genvm-node: usage: genvm-node contracts' "$dir/err" && ok || bad "contracts usage message: $(cat "$dir/err")"
expect_error "txs bad address" 2 "$node" --state "$db" txs 0x12
grep -q 'an address is 0x followed by 40 hex digits' "$dir/err" && ok || bad "txs bad address message: $(cat "$dir/err")"
"$node" --state "$dir/fundonly.db" fund "$me" 1 >/dev/null
[ "$("$node" --state "$dir/fundonly.db" contracts)" = "no contracts" ] && ok || bad "contracts of an empty state"

# storage ADDRESS: the contract's slots (id, size, the first --bytes bytes in hex), paged.
expect_rc "storage" 0 "$node" --state "$db" storage "$addr"
nslots=$(sed -n 's/.*: \([0-9]*\) slots (showing.*/\1/p' "$dir/out")
[ "${nslots:-0}" -ge 2 ] && grep -q "^$addr: $nslots slots (showing 1-$nslots)$" "$dir/out" && ok || bad "storage head: $(head -2 "$dir/out")"
[ "$(grep -c '^  slot [0-9a-f]\{64\}  [0-9]* bytes  ' "$dir/out")" -eq "$nslots" ] && ok || bad "storage rows: $(cat "$dir/out")"
# The counter's u64 (as `view get` reads it) is the 8 bytes of the contract slot, little-endian.
count=$("$node" --state "$db" view "$addr" get | cut -d' ' -f2)
count_hex=$(python3 -c 'import sys; print(int(sys.argv[1]).to_bytes(8, "little").hex())' "$count")
# (storage is kept in 32-byte pages, so the slot holds 32 bytes).
grep -q "^  slot [0-9a-f]\{64\}  32 bytes  ${count_hex}0\{48\}\$" "$dir/out" && ok || bad "counter slot $count_hex: $(cat "$dir/out")"
grep -q '… ([0-9]* more: --bytes)$' "$dir/out" && ok || bad "code slot cut at 64 bytes: $(cat "$dir/out")"
"$node" --state "$db" --bytes 2 storage "$addr" | grep -q "  32 bytes  ${count_hex:0:4}… (30 more: --bytes)\$" && ok || bad "storage --bytes 2"
[ "$("$node" --state "$db" --limit 1 storage "$addr" | grep -c '^  slot ')" -eq 1 ] && ok || bad "storage --limit 1"
"$node" --state "$db" --json --bytes 0 storage "$addr" | grep -q '"bytes_per_slot":0,"slots":\[{"slot":"[0-9a-f]\{64\}","size":[0-9]*,"data":"","truncated":true}' &&
  ok || bad "storage --json"
expect_error "storage unknown address" 2 "$node" --state "$db" storage 0x00000000000000000000000000000000000000ee
grep -qx 'genvm-node: no contract at 0x00000000000000000000000000000000000000ee' "$dir/err" && ok || bad "storage unknown message: $(cat "$dir/err")"
expect_error "bad bytes" 2 "$node" --state "$db" --bytes 65537 storage "$addr"
grep -qx 'genvm-node: --bytes needs a number from 0 to 65536' "$dir/err" && ok || bad "bad bytes message: $(cat "$dir/err")"
expect_error "storage usage" 2 "$node" --state "$db" storage
grep -qx 'genvm-node: usage: genvm-node storage ADDRESS' "$dir/err" && ok || bad "storage usage message: $(cat "$dir/err")"

# A deploy whose result is not Return creates nothing: one line, no address, exit 3 (token
# needs its supply argument; devloop takes none).
expect_rc "failed deploy" 3 "$node" --state "$db" --validators 1 deploy "$ex/token.wasm"
grep -q '^tx [0-9]*  deployment failed: UserError .*, no contract created$' "$dir/out" && ok || bad "failed deploy line: $(cat "$dir/out")"
grep -q '0x[0-9a-f]\{40\}' "$dir/out" && bad "failed deploy shows an address: $(cat "$dir/out")" || ok
expect_rc "failed deploy --json" 3 "$node" --state "$db" --validators 1 --json deploy "$tn/devloop.wasm" 5
grep -q '"address":null,' "$dir/out" && grep -q '"outcome":"contract_error","exit_code":3}' "$dir/out" && ok ||
  bad "failed deploy --json: $(cat "$dir/out")"
failed_tx=$(sed -n 's/^{"tx":\([0-9]*\).*/\1/p' "$dir/out")
"$node" --state "$db" tx "$failed_tx" | grep -q 'deployment failed: UserError "no deploy arguments", no contract created' &&
  ok || bad "tx of a failed deploy"
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after failed deploys"

# Timeouts are named: a leader that loops forever is killed at --timeout, its round says so,
# no validator ran (the progress line says that too), the transaction is undetermined (exit 4).
start=$(date +%s)
expect_rc "leader timeout" 4 "$node" --state "$db" --validators 2 --rounds 2 --timeout 1 call "$dl" forever
[ $(($(date +%s) - start)) -lt 20 ] && ok || bad "two 1 s timeouts took $(($(date +%s) - start)) s"
[ "$(grep -c 'leader node [0-9] -> timeout (killed at the deadline, --timeout); no validators ran' "$dir/out")" -eq 2 ] &&
  ok || bad "timeout rounds: $(cat "$dir/out")"
grep -q 'round 2: leader node 1 timed out, no validators ran' "$dir/err" && ok || bad "timeout progress: $(cat "$dir/err")"
grep -q 'validators 2/2 done' "$dir/err" && bad "progress counted validators that never ran: $(cat "$dir/err")" || ok
expect_rc "leader timeout --json" 4 "$node" --state "$db" --validators 1 --rounds 1 --timeout 1 --json call "$dl" forever
grep -q '"leader_outcome":"timeout"' "$dir/out" && ok || bad "timeout --json: $(cat "$dir/out")"
expect_error "view timeout" 3 "$node" --state "$db" --timeout 1 view "$dl" forever

# Readers are never blocked: while a write transaction holds the write lock (a call looping
# until it is interrupted), state, tx, view, check and the sqlite3 shell all answer at once.
"$node" --state "$db" --validators 1 --rounds 1 --timeout 60 call "$dl" forever >/dev/null 2>&1 &
writer=$!
sleep 1.5
reader_ok() {  # NAME CMD...: succeeds within 4 s while the writer is still running
  local name="$1"; shift
  if timeout 4 "$@" >"$dir/rout" 2>"$dir/rerr" && kill -0 "$writer" 2>/dev/null; then ok; else
    bad "reader $name during a write: $(cat "$dir/rerr" "$dir/rout" | head -3)"
  fi
}
reader_ok state "$node" --state "$db" state "$addr"
reader_ok tx "$node" --state "$db" tx 2
reader_ok view "$node" --state "$db" view "$addr" get
reader_ok check "$node" --state "$db" check
if command -v sqlite3 >/dev/null; then
  reader_ok sqlite3 sqlite3 "$db" 'select count(*) from transactions'
fi
reader_ok python-sqlite3 python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from transactions").fetchone())' "$db"
# ... and a second writer is refused at once with one line (exit 1), not after consensus.
expect_error "second writer" 1 "$node" --state "$db" call "$addr" increment
grep -q 'locked' "$dir/err" && ok || bad "second writer message: $(cat "$dir/err")"
kill -TERM "$writer"
wait "$writer"
writer=

# Interrupted: SIGINT / SIGTERM cancel the run, roll the transaction back, remove the run's
# socket folder, and say so (exit 130 / 143).
mkdir -p "$dir/tmp"
before=$("$node" --state "$db" --json state "$me" | sed -n 's/.*"nonce":\([0-9]*\).*/\1/p')
for sig in INT TERM; do
  TMPDIR="$dir/tmp" "$node" --state "$db" --validators 1 --rounds 1 --timeout 30 call "$dl" forever >"$dir/out" 2>"$dir/err" &
  writer=$!
  sleep 1.5
  ls "$dir/tmp" | grep -q genvm-node- && ok || bad "no socket folder while running"
  start=$(date +%s)
  kill -"$sig" "$writer"
  wait "$writer"
  rc=$?
  writer=
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$rc" -eq "$want" ] && ok || bad "SIG$sig: rc $rc (want $want): $(cat "$dir/err")"
  [ $(($(date +%s) - start)) -lt 10 ] && ok || bad "SIG$sig took $(($(date +%s) - start)) s"
  grep -q "^genvm-node: interrupted by SIG$sig: the transaction in progress was rolled back" "$dir/err" && ok ||
    bad "SIG$sig message: $(cat "$dir/err")"
  [ -z "$(ls "$dir/tmp")" ] && ok || bad "SIG$sig left $(ls "$dir/tmp")"
done
after=$("$node" --state "$db" --json state "$me" | sed -n 's/.*"nonce":\([0-9]*\).*/\1/p')
[ "$before" = "$after" ] && ok || bad "interrupted transactions committed: nonce $before -> $after"

# Arguments: 0x + 40 hex is an address, @FILE / @- a value's text, b@FILE / b@- raw bytes.
out=$("$node" --state "$db" --validators 1 --json call "$dl" echo 0x00000000000000000000000000000000000000Ab 2>/dev/null)
echo "$out" | grep -q '"result":"addr#00000000000000000000000000000000000000ab"' && ok || bad "0x address arg: $out"
printf '{"k": [1, "two"]}\n' >"$dir/arg.txt"
[ "$("$node" --state "$db" view "$dl" echo @"$dir/arg.txt")" = 'Return {"k": [1, "two"]}' ] && ok || bad "@FILE"
[ "$(printf '"from stdin"' | "$node" --state "$db" view "$dl" echo @-)" = 'Return "from stdin"' ] && ok || bad "@-"
printf '\x00\x01\xfe' >"$dir/arg.bin"
[ "$("$node" --state "$db" view "$dl" echo b@"$dir/arg.bin")" = 'Return b#0001fe' ] && ok || bad "b@FILE"
[ "$(printf 'hi' | "$node" --state "$db" view "$dl" echo b@-)" = 'Return b#6869' ] && ok || bad "b@-"
expect_error "0x short" 2 "$node" --state "$db" call "$dl" echo 0x1234
grep -q '40 hex digits (this has 4)' "$dir/err" && ok || bad "0x short message: $(cat "$dir/err")"
expect_error "bare word" 2 "$node" --state "$db" call "$dl" echo hello
grep -qF "a string is quoted, \"hello\"" "$dir/err" && ok || bad "bare word message: $(cat "$dir/err")"
long=$(printf 'x%.0s' $(seq 5000))
expect_error "long bad argument" 2 "$node" --state "$db" call "$dl" echo "[$long"
[ "$(wc -c <"$dir/err")" -lt 400 ] && ok || bad "long argument quoted whole: $(wc -c <"$dir/err") bytes"
grep -q '(5001 characters)' "$dir/err" && ok || bad "long argument length: $(cat "$dir/err")"
expect_error "stdin twice" 2 "$node" --state "$db" call "$dl" echo @- @-
expect_error "missing @FILE" 2 "$node" --state "$db" call "$dl" echo @"$dir/nope.txt"
expect_error "bad @FILE text" 2 "$node" --state "$db" call "$dl" echo @"$dir/arg.bin"

# Modules genvm would refuse are refused before any run (check FILE and deploy's pre-check):
# an import genvm does not provide, a _start with a parameter.
expect_rc "check module" 0 "$node" check "$ex/counter.wasm"
grep -q 'a contract genvm can run' "$dir/out" && ok || bad "check module line"
expect_error "check bad import" 2 "$node" check "$tn/bad_import.wasm"
grep -q 'genlayer_sdk.nope' "$dir/err" && ok || bad "bad import message: $(cat "$dir/err")"
expect_error "check _start param" 2 "$node" check "$tn/start_param.wasm"
grep -q '_start has type \[i32\] -> \[\]' "$dir/err" && ok || bad "_start message: $(cat "$dir/err")"
expect_error "deploy bad import" 2 "$node" --state "$db" deploy "$tn/bad_import.wasm"
expect_error "deploy _start param" 2 "$node" --state "$db" deploy "$tn/start_param.wasm"

# Bad inputs: exit 2.
printf 'not wasm' >"$dir/junk.wasm"
expect_error "malformed wasm" 2 "$node" --state "$db" deploy "$dir/junk.wasm"
expect_error "missing file" 2 "$node" --state "$db" deploy "$dir/nope.wasm"
expect_error "directory as contract" 2 "$node" --state "$db" deploy /tmp
grep -q '/tmp is a directory' "$dir/err" && ok || bad "directory message: $(cat "$dir/err")"
expect_error "directory as check module" 2 "$node" check /tmp
touch "$dir/unreadable.wasm" && chmod 000 "$dir/unreadable.wasm"
if [ "$(id -u)" -ne 0 ]; then expect_error "unreadable contract" 2 "$node" --state "$db" deploy "$dir/unreadable.wasm"; fi
expect_error "unknown address" 2 "$node" --state "$db" call 0x00000000000000000000000000000000000000ee get
expect_error "unknown address view" 2 "$node" --state "$db" view 0x00000000000000000000000000000000000000ee get
expect_error "unknown address state" 2 "$node" --state "$db" state 0x00000000000000000000000000000000000000ee
expect_error "bad address" 2 "$node" --state "$db" call 0x1234 get
expect_error "malformed args" 2 "$node" --state "$db" call "$addr" add '[1,'
expect_error "unknown tx" 2 "$node" --state "$db" tx 999
expect_error "bad tx id" 2 "$node" --state "$db" tx abc
expect_error "unknown command" 2 "$node" --state "$db" frobnicate
expect_error "unknown option" 2 "$node" --bogus
expect_error "no command" 2 "$node"
expect_error "bad validators" 2 "$node" --validators 0 check
expect_error "bad timeout" 2 "$node" --timeout 0 check
expect_error "insufficient balance" 2 "$node" --state "$db" --value 1000 call "$addr" increment
expect_error "bad value" 2 "$node" --state "$db" --value -1 call "$addr" increment
expect_error "bad fund amount" 2 "$node" --state "$db" fund "$me" 0
expect_error "bad fund address" 2 "$node" --state "$db" fund 0x12 5
expect_error "missing executor" 2 "$node" --state "$db" --genvm "$dir/none" call "$addr" get
expect_error "state in a missing folder" 2 "$node" --state "$dir/no/such/dir/s.db" check
# --json carries the same status: the error object on stdout, the line on stderr.
"$node" --state "$db" --json tx 999 >"$dir/out" 2>/dev/null
[ $? -eq 2 ] && grep -q '^{"error":"no transaction 999","error_code":"no_transaction","exit_code":2}$' "$dir/out" && ok ||
  bad "--json error: $(cat "$dir/out")"

# A mistyped --state for a read command creates nothing; a file that is not ours is refused,
# naming it; a directory is one line.
for c in "state $addr" "tx 1" "view $addr get" check; do
  # shellcheck disable=SC2086
  expect_error "read with a mistyped state ($c)" 2 "$node" --state "$dir/typo.db" $c
  grep -q "no state database $dir/typo.db" "$dir/err" && ok || bad "mistyped state message: $(cat "$dir/err")"
  [ ! -e "$dir/typo.db" ] && ok || { bad "read command '$c' created $dir/typo.db"; rm -f "$dir/typo.db"; }
done
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("create table notes(x)"); c.commit()' "$dir/other.db"
expect_error "foreign sqlite (read)" 2 "$node" --state "$dir/other.db" check
grep -q "$dir/other.db is a SQLite database that genvm-node did not make" "$dir/err" && ok || bad "foreign message: $(cat "$dir/err")"
expect_error "foreign sqlite (write)" 2 "$node" --state "$dir/other.db" fund "$me" 5
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*) from sqlite_master").fetchone()[0])' "$dir/other.db" |
  grep -qx 1 && ok || bad "a refused file was changed"
printf 'plain text, not a database, long enough to have a header........................' >"$dir/text.db"
expect_error "not sqlite" 2 "$node" --state "$dir/text.db" state "$addr"
grep -q "$dir/text.db is not a SQLite database" "$dir/err" && ok || bad "not-sqlite message: $(cat "$dir/err")"
expect_error "state is a directory" 2 "$node" --state "$dir" check
grep -q 'is a directory' "$dir/err" && ok || bad "state directory message: $(cat "$dir/err")"

# A database another process holds locked: one clear line, quickly (exit 1).
python3 - "$db" "$dir/locked" <<'PY' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(30)
PY
locker=$!
for _ in $(seq 100); do [ -e "$dir/locked" ] && break; sleep 0.1; done
expect_error "locked database" 1 "$node" --state "$db" call "$addr" increment
grep -q 'locked' "$dir/err" && ok || bad "locked message: $(cat "$dir/err")"
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null
locker=

# The nonce only moved for the transactions that were committed.
"$node" --state "$db" check | grep -qx consistent && ok || bad "check after errors"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
