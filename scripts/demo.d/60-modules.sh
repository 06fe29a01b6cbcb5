# demo: the LLM and web modules — examples/llm.c, render.c and the Python examples price_feed, wizard_of_coin, prediction_market on genvm-node (leader + 4 validators)
set -euo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
ex="$b/examples"
for need in "$node" "$b/tools/genvm/genvm" "$b/tools/genvm-module-llm/genvm-module-llm" \
            "$b/tools/genvm-module-web/genvm-module-web" "$ex/llm.wasm" "$ex/render.wasm" \
            tests/modules/llm_server/node_modules/node-llama-cpp; do
  if [ ! -e "$need" ]; then
    echo "skipped: needs $need (make build; scripts/bootstrap installs the inference server)"
    exit 0
  fi
done
dir=$(mktemp -d /tmp/genvm-modules-demo-XXXXXX)
python3 scripts/demo_module_servers.py "$b" "$dir" > "$dir/ready" 2> "$dir/servers.log" &
servers=$!
trap 'kill "$servers" 2>/dev/null; wait "$servers" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 300); do
  [ -s "$dir/ready" ] && break
  kill -0 "$servers" 2>/dev/null || { echo "the local servers did not start:"; cat "$dir/servers.log"; exit 1; }
  sleep 0.1
done
read -r _ page llm_config web_config < "$dir/ready"
echo "a local inference server (node-llama-cpp, a tiny random-weight model: its answers are noise, but real"
echo "inference at temperature 0 with a seed) and a page at $page; genvm-node starts the modules itself"
n() { "$node" --state "$dir/demo.db" --module-llm-config "$llm_config" --module-web-config "$web_config" "$@"; }
addr_of() { sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p'; }
say() { printf '\n$ genvm-node --module-llm-config llm.yaml --module-web-config web.yaml %s\n' "$*"; }

say deploy llm.wasm
llm=$(n --json deploy "$ex/llm.wasm" 2>/dev/null | addr_of)
echo "llm at $llm"
say call "$llm" ask '"What is the capital of France?"' "  (the leader asks the model; each validator asks too and has the module compare the answers, EqComparative)"
n call "$llm" ask '"What is the capital of France?"' 2>/dev/null
say view "$llm" answer
n view "$llm" answer

say deploy render.wasm
render=$(n --json deploy "$ex/render.wasm" 2>/dev/null | addr_of)
echo "render at $render"
say call "$render" fetch "\"$page\"" "  (the page is rendered in Chromium, text mode; validators compare the number they read)"
n call "$render" fetch "\"$page\"" 2>/dev/null
say view "$render" value
n view "$render" value

# The Python examples that need the modules (examples/python/), when the build packed the
# Python runners: the same servers, the same 4 validators.
runners="$b/runners/cpython/installed"
if [ ! -e "$runners/latest.json" ]; then
  echo
  echo "Python module examples skipped: needs $runners (a build with -DGENVM_BUILD_CPYTHON=ON)"
  exit 0
fi
export GENVM_RUNNERS_DIR="$runners"  # genvm-node passes it on to genvm
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["py-genlayer"])' "$runners/latest.json")
for c in price_feed wizard_of_coin prediction_market; do
  sed "s/py-genlayer:latest/py-genlayer:$id/" "examples/python/$c.py" > "$dir/$c.py"
done
echo
echo "Python contracts on the same modules (py-genlayer:$id)"

say deploy price_feed.py "\"$page\"" "  (gl.nondet.web.get inside gl.eq_principle.strict_eq: every validator must read the leader's number)"
feed=$(n --json deploy "$dir/price_feed.py" "\"$page\"" 2>/dev/null | addr_of)
echo "price_feed at $feed"
say call "$feed" refresh
n call "$feed" refresh 2>/dev/null
say view "$feed" get_price
n view "$feed" get_price

say deploy wizard_of_coin.py "  (gl.nondet.exec_prompt judged with gl.eq_principle.prompt_comparative)"
wizard=$(n --json deploy "$dir/wizard_of_coin.py" 2>/dev/null | addr_of)
echo "wizard_of_coin at $wizard"
say call "$wizard" ask '"Should the wizard give away the coin?"'
n call "$wizard" ask '"Should the wizard give away the coin?"' 2>/dev/null

say deploy prediction_market.py '"the price is above 4000 coins"' "\"$page\"" "  (gl.vm.run_nondet: an LLM verdict on the page, each validator asks again and compares)"
market=$(n --json deploy "$dir/prediction_market.py" '"the price is above 4000 coins"' "\"$page\"" 2>/dev/null | addr_of)
echo "prediction_market at $market"
say call "$market" resolve
n call "$market" resolve 2>/dev/null
say view "$market" status
n view "$market" status
