#!/usr/bin/env bash
# tests/wasm_diff/reduce.sh IN.wasm OUT.wasm: shrinks a module on which our engine and node
# disagree, with binaryen's wasm-reduce, keeping only reductions on which they still disagree.
# Prints the reduced module as text at the end. Uses GENVM_WASM_DIFF and NODE like run.sh.
# (The disagreement kept may change kind during reduction; compare the final transcripts.)
set -uo pipefail
if [[ $# -ne 2 || "$1" == "--help" ]]; then
  echo "usage: tests/wasm_diff/reduce.sh IN.wasm OUT.wasm"
  [[ "${1:-}" == "--help" ]]; exit $?
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="${NODE:-node}"
tool="${GENVM_WASM_DIFF:-}"
if [[ -z "$tool" ]]; then
  tool="$(find "${GENVM_BUILD:-$here/../../build}" -type f -name genvm-wasm-diff -perm -u+x 2>/dev/null | head -n1)"
fi
[[ -n "$tool" && -x "$tool" ]] || { echo "reduce.sh: genvm-wasm-diff not found: set GENVM_WASM_DIFF" >&2; exit 2; }
[[ -f "$1" ]] || { echo "reduce.sh: $1 not found" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The interestingness test: prints "differ" while both sides run and disagree, else "same"
# (also when V8 rejects the reduced module, or ours runs out of fuel).
cat >"$tmp/differ.sh" <<SCRIPT
#!/usr/bin/env bash
"$node" --no-warnings "$here/node_runner.mjs" "$tmp/t.wasm" >"$tmp/n.txt" 2>/dev/null || { echo same; exit 0; }
"$tool" "$tmp/t.wasm" >"$tmp/o.txt" 2>/dev/null; rc=\$?
[[ \$rc -eq 0 || \$rc -eq 1 ]] || { echo same; exit 0; }
cmp -s "$tmp/n.txt" "$tmp/o.txt" && echo same || echo differ
SCRIPT
chmod +x "$tmp/differ.sh"
cp "$1" "$tmp/t.wasm"
[[ "$("$tmp/differ.sh")" == differ ]] || { echo "reduce.sh: $1 does not show a difference" >&2; exit 1; }
features=(--mvp-features --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int
          --enable-multivalue --enable-tail-call --enable-mutable-globals)
wasm-reduce "$1" "${features[@]}" --command="$tmp/differ.sh" --force -t "$tmp/t.wasm" -w "$2" >"$tmp/reduce.log" 2>&1 ||
  { tail -n 5 "$tmp/reduce.log" >&2; exit 1; }
wasm2wat "$2" 2>/dev/null || wasm-dis "$2"
cp "$2" "$tmp/t.wasm"
echo ";; node:"; "$node" --no-warnings "$here/node_runner.mjs" "$tmp/t.wasm" | sed 's/^/;;   /'
echo ";; ours:"; "$tool" "$tmp/t.wasm" | sed 's/^/;;   /'
