#!/usr/bin/env bash
# tests/wasm_diff/selftest.sh: checks run.sh itself, with node on both sides. With a faithful
# "ours" (node_runner.mjs again) run.sh must pass and count modules as equal; with a "ours"
# that adds one log line to every transcript it must fail and save the module with both
# transcripts. The second half fails if run.sh stops comparing or stops failing on a mismatch.
# A third "ours" wrong only as --engine jit checks the JIT-against-interpreter comparison the same
# way. (The fake sides take the module as their last argument, after run.sh's options.)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="${NODE:-node}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/same.sh" <<SCRIPT
#!/usr/bin/env bash
exec "$node" --no-warnings "$here/node_runner.mjs" "\${@: -1}"
SCRIPT
cat >"$tmp/wrong.sh" <<SCRIPT
#!/usr/bin/env bash
"$node" --no-warnings "$here/node_runner.mjs" "\${@: -1}" && echo "log i32:0"
SCRIPT
cat >"$tmp/wrong_jit.sh" <<SCRIPT
#!/usr/bin/env bash
"$node" --no-warnings "$here/node_runner.mjs" "\${@: -1}" || exit
[[ " \$* " == *" --engine jit "* ]] && echo "detail fuel 0"
exit 0
SCRIPT
chmod +x "$tmp/same.sh" "$tmp/wrong.sh" "$tmp/wrong_jit.sh"

if ! GENVM_WASM_DIFF="$tmp/same.sh" WASM_DIFF_REGRESSIONS="$tmp/same" NODE="$node" \
    "$here/run.sh" 3 11 >"$tmp/same.log" 2>&1; then
  echo "selftest: run.sh failed with identical sides:"; cat "$tmp/same.log"; exit 1
fi
grep -Eq ', [1-9][0-9]* equal, .*, 0 mismatches$' "$tmp/same.log" ||
  { echo "selftest: expected equal modules:"; cat "$tmp/same.log"; exit 1; }

if GENVM_WASM_DIFF="$tmp/wrong.sh" WASM_DIFF_REGRESSIONS="$tmp/wrong" NODE="$node" \
    "$here/run.sh" 3 11 >"$tmp/wrong.log" 2>&1; then
  echo "selftest: run.sh passed although every transcript differed:"; cat "$tmp/wrong.log"; exit 1
fi
saved=("$tmp"/wrong/*.wasm)
[[ -f "${saved[0]}" && -f "${saved[0]%.wasm}.node.txt" && -f "${saved[0]%.wasm}.ours.txt" ]] ||
  { echo "selftest: no regression saved with both transcripts:"; cat "$tmp/wrong.log"; exit 1; }
if GENVM_WASM_DIFF="$tmp/wrong_jit.sh" WASM_DIFF_REGRESSIONS="$tmp/wrong_jit" NODE="$node" \
    "$here/run.sh" 3 11 >"$tmp/wrong_jit.log" 2>&1; then
  echo "selftest: run.sh passed although every JIT transcript differed:"; cat "$tmp/wrong_jit.log"; exit 1
fi
grep -Eq 'JIT against the interpreter: .*, 0 equal, [1-9][0-9]* mismatches$' "$tmp/wrong_jit.log" &&
  grep -Eq ', 0 mismatches$' <(grep -v 'JIT against' "$tmp/wrong_jit.log" | tail -n1) ||
  { echo "selftest: expected JIT-only mismatches:"; cat "$tmp/wrong_jit.log"; exit 1; }
saved=("$tmp"/wrong_jit/*.wasm)
[[ -f "${saved[0]}" && -f "${saved[0]%.wasm}.interp.txt" && -f "${saved[0]%.wasm}.jit.txt" ]] ||
  { echo "selftest: no JIT regression saved with both transcripts:"; cat "$tmp/wrong_jit.log"; exit 1; }
echo "selftest: ok ($(tail -n1 "$tmp/same.log" | sed 's/.*: //'); mismatches detected and saved)"
