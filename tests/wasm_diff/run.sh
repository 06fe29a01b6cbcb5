#!/usr/bin/env bash
# tests/wasm_diff/run.sh [SECONDS] [SEED]: differential test of our engines against V8.
# For SECONDS (default 60) it turns seeded random bytes into valid modules with binaryen's
# `wasm-opt --translate-to-fuzz`, runs each in node (node_runner.mjs), in our interpreter and in
# our JIT (genvm-wasm-diff --engine interp|jit --detail, under fuel), and compares node with the
# interpreter (a difference that vanishes when binaryen's --denan turns NaNs into 0 is counted
# apart: wasm leaves NaN bits nondeterministic) and the JIT with the interpreter byte for byte,
# trap kinds, trap offsets, fuel left and exit code included. A mismatch is saved as
# regressions/<seed>-<index>.wasm with <name>.node.txt and <name>.ours.txt (or, for the JIT,
# <name>.interp.txt and <name>.jit.txt) beside it; saved regressions are replayed first on every
# run. Exit 1 on any mismatch, 2 on a setup problem.
# Environment: GENVM_WASM_DIFF (the tool; default: found under $GENVM_BUILD or build/),
# WASM_DIFF_REGRESSIONS (where mismatches go; default: regressions/ next to this script),
# NODE (default node), FUEL (per module; default the tool's), WASM_DIFF_JIT=0 (leave the JIT out).
set -uo pipefail

if [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
seconds="${1:-60}"
seed="${2:-$(date +%s)}"
[[ "$seconds" =~ ^[0-9]+$ && "$seed" =~ ^[0-9]+$ ]] || { echo "run.sh: SECONDS and SEED must be non-negative integers" >&2; exit 2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="${NODE:-node}"
tool="${GENVM_WASM_DIFF:-}"
if [[ -z "$tool" ]]; then
  tool="$(find "${GENVM_BUILD:-$here/../../build}" -type f -name genvm-wasm-diff -perm -u+x 2>/dev/null | head -n1)"
fi
[[ -n "$tool" && -x "$tool" ]] || { echo "run.sh: genvm-wasm-diff not found: build it and/or set GENVM_WASM_DIFF" >&2; exit 2; }
command -v "$node" >/dev/null || { echo "run.sh: node not found (set NODE)" >&2; exit 2; }
command -v wasm-opt >/dev/null || { echo "run.sh: wasm-opt (binaryen) not found" >&2; exit 2; }
out_dir="${WASM_DIFF_REGRESSIONS:-$here/regressions}"
fuel_args=()
[[ -n "${FUEL:-}" ]] && fuel_args=(--fuel "$FUEL")

# What our engine supports. Reference types stay off: binaryen 108 emits pre-standard
# reference types (funcref values in externref slots, typed (ref func)), which V8 rejects.
features=(--mvp-features --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int
          --enable-multivalue --enable-tail-call --enable-mutable-globals)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
total=0 equal=0 nan_only=0 skipped=0 mismatches=0
jit_equal=0 jit_compiled=0 jit_mismatches=0
use_jit="${WASM_DIFF_JIT:-1}"

# compare_engines WASM NAME SAVE: the interpreter and the JIT on WASM, --detail transcripts and
# exit codes byte for byte (no NaN escape: the JIT has the interpreter's exact semantics). Leaves
# the interpreter's transcript in $tmp/interp.txt and its exit code in $interp_rc.
compare_engines() {
  local wasm="$1" name="$2" save="$3" rc_jit
  timeout 60 "$tool" "${fuel_args[@]}" --engine interp --detail "$wasm" >"$tmp/interp.txt" 2>"$tmp/interp.err"
  interp_rc=$?
  [[ "$use_jit" == 0 ]] && return
  timeout 60 "$tool" "${fuel_args[@]}" --engine jit --detail "$wasm" >"$tmp/jit.txt" 2>"$tmp/jit.err"
  rc_jit=$?
  echo "exit $interp_rc" >>"$tmp/interp.txt"
  echo "exit $rc_jit" >>"$tmp/jit.txt"
  # The JIT's note (first stderr line): "jit: N functions, ..." when it compiled the module.
  grep -q '^jit: [0-9]* functions' "$tmp/jit.err" && jit_compiled=$((jit_compiled + 1))
  if cmp -s "$tmp/interp.txt" "$tmp/jit.txt"; then
    jit_equal=$((jit_equal + 1))
  else
    jit_mismatches=$((jit_mismatches + 1))
    echo "JIT MISMATCH $name ($(head -n1 "$tmp/jit.err")): first difference:" >&2
    diff "$tmp/interp.txt" "$tmp/jit.txt" | head -n 6 >&2
    if [[ "$save" == save ]]; then
      mkdir -p "$out_dir"
      cp "$wasm" "$out_dir/$name.wasm"
      cp "$tmp/interp.txt" "$out_dir/$name.interp.txt"
      cp "$tmp/jit.txt" "$out_dir/$name.jit.txt"
      echo "  saved as $out_dir/$name.wasm" >&2
    fi
  fi
  sed -i '$d' "$tmp/interp.txt"  # the exit line again
}

# compare FILE NAME SAVE: runs both sides on FILE; returns after updating the counters.
compare() {
  local wasm="$1" name="$2" save="$3" rc_node rc_ours
  total=$((total + 1))
  compare_engines "$wasm" "$name" "$save"
  timeout 60 "$node" --no-warnings "$here/node_runner.mjs" "$wasm" >"$tmp/node.txt" 2>"$tmp/node.err"
  rc_node=$?
  if [[ $rc_node -ne 0 ]]; then
    # No reference (V8 rejected the module or hung): nothing to compare against.
    skipped=$((skipped + 1))
    return
  fi
  # The interpreter's run above, less the lines node cannot print.
  grep -v '^detail ' "$tmp/interp.txt" >"$tmp/ours.txt"
  cp "$tmp/interp.err" "$tmp/ours.err"
  rc_ours=$interp_rc
  if [[ $rc_ours -eq 4 ]]; then
    skipped=$((skipped + 1))  # out of fuel
    return
  fi
  if [[ $rc_ours -ne 0 ]]; then
    # 1 is also what a sanitizer build exits with: keep the reason in the transcript.
    echo "exit $rc_ours: $(head -c 300 "$tmp/ours.err")" >>"$tmp/ours.txt"
  fi
  if cmp -s "$tmp/node.txt" "$tmp/ours.txt"; then
    equal=$((equal + 1))
    return
  fi
  # A NaN's sign and payload are nondeterministic in wasm, and a module can observe them through
  # memory or reinterpret (the log lines only compare NaN-ness). So retry with binaryen's
  # --denan (every NaN made 0 at run time): if that agrees, the difference was NaN bits only.
  if wasm-opt "$wasm" "${features[@]}" --denan -o "$tmp/denan.wasm" 2>/dev/null &&
     timeout 60 "$node" --no-warnings "$here/node_runner.mjs" "$tmp/denan.wasm" >"$tmp/node.denan.txt" 2>/dev/null &&
     timeout 60 "$tool" "${fuel_args[@]}" "$tmp/denan.wasm" >"$tmp/ours.denan.txt" 2>/dev/null &&
     cmp -s "$tmp/node.denan.txt" "$tmp/ours.denan.txt"; then
    nan_only=$((nan_only + 1))
    return
  fi
  mismatches=$((mismatches + 1))
  echo "MISMATCH $name: first difference:" >&2
  diff "$tmp/node.txt" "$tmp/ours.txt" | head -n 6 >&2
  if [[ "$save" == save ]]; then
    mkdir -p "$out_dir"
    cp "$wasm" "$out_dir/$name.wasm"
    cp "$tmp/node.txt" "$out_dir/$name.node.txt"
    cp "$tmp/ours.txt" "$out_dir/$name.ours.txt"
    echo "  saved as $out_dir/$name.wasm" >&2
  fi
}

shopt -s nullglob
for old in "$out_dir"/*.wasm; do
  compare "$old" "$(basename "$old" .wasm)" nosave
done
replayed=$total

deadline=$(($(date +%s) + seconds))
i=0
while (($(date +%s) < deadline)); do
  i=$((i + 1))
  len=$(((seed * 7919 + i * 104729) % 9000 + 200))
  "$node" "$here/random_bytes.mjs" $((seed * 1000003 + i)) "$len" >"$tmp/in.bin" || exit 2
  if ! wasm-opt "$tmp/in.bin" -ttf "${features[@]}" -o "$tmp/m.wasm" 2>"$tmp/opt.err"; then
    continue  # binaryen could not make a module from these bytes; not our concern
  fi
  compare "$tmp/m.wasm" "$seed-$i" save
done

echo "wasm_diff: seed $seed, $seconds s: $total modules ($replayed replayed), $equal equal," \
     "$nan_only equal after --denan (NaN bits only), $skipped skipped (out of fuel / no reference)," \
     "$mismatches mismatches"
if [[ "$use_jit" != 0 ]]; then
  echo "wasm_diff: JIT against the interpreter: $total modules, $jit_compiled compiled by the JIT" \
       "(the rest fell back to the interpreter), $jit_equal equal, $jit_mismatches mismatches"
fi
[[ $mismatches -eq 0 && $jit_mismatches -eq 0 ]]
