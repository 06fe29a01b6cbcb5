# demo: genvm-node — deploy the example contracts and send them transactions (leader + 4 validators)
set -euo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
ex="$b/examples"
if [ ! -x "$node" ] || [ ! -x "$b/tools/genvm/genvm" ] || [ ! -e "$ex/counter.wasm" ]; then
  echo "skipped: needs $node, $b/tools/genvm/genvm and the example contracts in $ex"
  exit 0
fi
dir=$(mktemp -d /tmp/genvm-node-demo-XXXXXX)
trap 'rm -rf "$dir"' EXIT
n() { "$node" --state "$dir/demo.db" "$@"; }
addr_of() { sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p'; }
say() { printf '\n$ genvm-node %s\n' "$*"; }

echo "state: a fresh SQLite database in $dir; every write transaction runs a leader and 4 validators"
say deploy counter.wasm
n deploy "$ex/counter.wasm" 2>/dev/null
counter=$(n --json tx 1 | addr_of)
say call "$counter" increment
n call "$counter" increment 2>/dev/null | sed -n '1,2p'
say call "$counter" add 41
n call "$counter" add 41 2>/dev/null | sed -n '1,2p'
say view "$counter" get
n view "$counter" get

me=0x00000000000000000000000000000000000000a1
say fund "$me" 1000 "  (the node's faucet: value exists only through fund receipts)"
n fund "$me" 1000 | sed -n '1p'
say --value 25 call "$counter" increment "  (25 move from the sender to the contract together with the accepted receipt)"
n --value 25 call "$counter" increment 2>/dev/null | sed -n '1,3p'

say deploy token.wasm 1000
token=$(n --json deploy "$ex/token.wasm" 1000 2>/dev/null | addr_of)
echo "token at $token"
bob=addr#00000000000000000000000000000000000000b0
say call "$token" transfer "$bob" 300
n call "$token" transfer "$bob" 300 2>/dev/null | sed -n '1,2p'
say call "$token" transfer "$bob" 5000 "  (more than the sender holds: a UserError the validators agree on; nothing is written)"
{ n call "$token" transfer "$bob" 5000 2>/dev/null || true; } | sed -n '1,2p'  # exit 3: a contract error
say view "$token" balance_of "$bob"
n view "$token" balance_of "$bob"

if [ -e "$ex/events.wasm" ] && [ -e "$ex/listener.wasm" ]; then
  say deploy events.wasm
  events=$(n --json deploy "$ex/events.wasm" 2>/dev/null | addr_of)
  echo "events at $events"
  say deploy listener.wasm "  (a contract with an on_notified method: it will receive the message events posts)"
  listener=$(n --json deploy "$ex/listener.wasm" 2>/dev/null | addr_of)
  echo "listener at $listener"
  say schema "$listener" "  (its methods, from the GenVM ABI's #get-schema method)"
  n schema "$listener"
  say --from "$listener" call "$events" notify '"hello"' "  (emits an event and posts on_notified(\"hello\") back to the sender: a follow-up transaction)"
  out=$(n --from "$listener" --json call "$events" notify '"hello"' 2>/dev/null)
  tx=$(echo "$out" | sed -n 's/^{"tx":\([0-9]*\),.*/\1/p')
  n tx "$tx" | grep -v '^  rounds:'
  fu=$(echo "$out" | sed -n 's/.*"follow_ups":\[\([0-9]*\).*/\1/p')
  [ -n "$fu" ] && n tx "$fu" | grep -v '^  rounds:'
  say view "$listener" last "  (the follow-up ran listener.on_notified: it counted the message and kept its text)"
  n view "$listener" last
fi

if [ -e "$ex/nondet.wasm" ]; then
  say deploy nondet.wasm
  nondet=$(n --json deploy "$ex/nondet.wasm" 2>/dev/null | addr_of)
  echo "nondet at $nondet"
  say call "$nondet" run 3 "  (3 non-deterministic blocks: the leader reads its clock; validators are handed its results)"
  n call "$nondet" run 3 2>/dev/null
fi

say state "$counter"
n state "$counter"
say state "$me"
n state "$me"
say contracts
n contracts
say txs --limit 5
n txs --limit 5
say storage "$counter"
n storage "$counter"
say check
n check
