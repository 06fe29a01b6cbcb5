#!/usr/bin/env bash
# tests/wasm_diff/check_cases.sh RUNNER...: compiles every cases/*.wat with wat2wasm, runs
# `RUNNER... FILE.wasm` and compares its transcript with cases/<name>.expected (written by
# hand). Run with node_runner.mjs it checks the reference side; with genvm-wasm-diff, ours.
# Exit 1 if any case differs, 2 on a setup problem.
set -uo pipefail
if [[ $# -eq 0 || "$1" == "--help" ]]; then
  echo "usage: tests/wasm_diff/check_cases.sh RUNNER [ARGS...]   (runs RUNNER ARGS... FILE.wasm)"
  [[ $# -gt 0 ]]; exit $?
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v wat2wasm >/dev/null || { echo "check_cases.sh: wat2wasm (wabt) not found" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0 count=0
for wat in "$here"/cases/*.wat; do
  name="$(basename "$wat" .wat)"
  wat2wasm "$wat" -o "$tmp/$name.wasm" || { echo "check_cases.sh: cannot assemble $wat" >&2; exit 2; }
  "$@" "$tmp/$name.wasm" >"$tmp/$name.out" 2>"$tmp/$name.err"
  count=$((count + 1))
  if ! diff -u "$here/cases/$name.expected" "$tmp/$name.out" >"$tmp/$name.diff"; then
    failed=$((failed + 1))
    echo "FAIL $name:" >&2
    head -n 20 "$tmp/$name.diff" >&2
    head -n 3 "$tmp/$name.err" >&2
  fi
done
echo "check_cases: $count cases, $failed failed"
[[ $failed -eq 0 ]]
