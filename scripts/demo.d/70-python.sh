# demo: Python contracts — examples/python/ on genvm-node (leader + 4 validators, CPython in wasm)
set -euo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
runners="$b/runners/cpython/installed"
for need in "$node" "$b/tools/genvm/genvm" "$runners/latest.json"; do
  if [ ! -e "$need" ]; then
    echo "skipped: needs $need (a build with -DGENVM_BUILD_CPYTHON=ON packs the Python runners)"
    exit 0
  fi
done
dir=$(mktemp -d /tmp/genvm-python-demo-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export GENVM_RUNNERS_DIR="$runners"  # genvm-node passes it on to genvm
n() { "$node" --state "$dir/demo.db" "$@"; }
addr_of() { sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p'; }
say() { printf '\n$ genvm-node %s\n' "$*"; }
# The examples depend on py-genlayer:latest, which GenVM resolves only in its unsafe debug
# modes; a real deployment pins the exact runner id, as here.
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["py-genlayer"])' "$runners/latest.json")
for ex in storage user_balances; do
  sed "s/py-genlayer:latest/py-genlayer:$id/" "examples/python/$ex.py" > "$dir/$ex.py"
done
echo "runner: py-genlayer:$id (the SDK in sdk/python/ on CPython 3.13 in wasm)"

say deploy storage.py '"hello"'
storage=$(n --json deploy "$dir/storage.py" '"hello"' 2>/dev/null | addr_of)
echo "storage at $storage"
say call "$storage" update_storage '"hello, world"'
n call "$storage" update_storage '"hello, world"' 2>/dev/null | sed -n '1,2p'
say view "$storage" get_storage
n view "$storage" get_storage

alice=0x00000000000000000000000000000000000000a1
bob=addr#00000000000000000000000000000000000000b0
say deploy user_balances.py
balances=$(n --json deploy "$dir/user_balances.py" 2>/dev/null | addr_of)
echo "user_balances at $balances"
say --from "$alice" call "$balances" deposit 100
n --from "$alice" call "$balances" deposit 100 2>/dev/null | sed -n '1,2p'
say --from "$alice" call "$balances" transfer "$bob" 30
n --from "$alice" call "$balances" transfer "$bob" 30 2>/dev/null | sed -n '1,2p'
say --from "$alice" call "$balances" transfer "$bob" 500 "  (more than alice holds: the contract's UserError, agreed by all; nothing is written)"
{ n --from "$alice" call "$balances" transfer "$bob" 500 2>/dev/null || true; } | sed -n '1,2p'
say view "$balances" balance_of "$bob"
n view "$balances" balance_of "$bob"
say schema "$storage" "  (the contract's methods, from the SDK's schema)"
n schema "$storage"
