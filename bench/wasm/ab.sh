#!/usr/bin/env bash
# bench/wasm/ab.sh: before/after comparison of genvm-wasm binaries on the bench kernels.
# Runs the binaries alternately (so machine load drifts hit them alike) and prints, per kernel,
# the minimum CPU time (user+sys, ms) of RUNS runs of each.
#   usage: bench/wasm/ab.sh [-b BUILD_DIR] [-s DIV] [-r RUNS] [-f] BIN...
#   -b  build folder holding bench/wasm/*.wasm (default: build)   -s  divide iteration counts
#   -r  runs per binary (default 3)   -f  run with --fuel 1000000000000000
# Copy a build's tools/genvm-wasm/genvm-wasm aside before changing the engine to compare.
set -euo pipefail
build=build; div=8; runs=3; fuel=()
while getopts "b:s:r:fh" o; do
  case "$o" in
    b) build="$OPTARG" ;; s) div="$OPTARG" ;; r) runs="$OPTARG" ;; f) fuel=(--fuel 1000000000000000) ;;
    *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; [[ "$o" == h ]] && exit 0; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || { echo "ab.sh: give at least one genvm-wasm binary" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
i=0; for b in "$@"; do i=$((i + 1)); echo "bin$i = $b"; done
printf '%-14s' kernel; i=0; for b in "$@"; do i=$((i + 1)); printf ' %8s' "bin$i"; done; echo
for src in "$here"/*.c; do
  k="$(basename "$src" .c)"
  [[ -f "$build/bench/wasm/$k.wasm" ]] || continue
  n=$(( $(grep -o 'BENCH_MAIN([0-9]*)' "$src" | tr -dc 0-9) / div )); ((n > 0)) || n=1
  declare -A best=()
  for ((r = 0; r < runs; r++)); do
    for b in "$@"; do
      t=$( { /usr/bin/time -f "%U %S" "$b" run "${fuel[@]}" "$build/bench/wasm/$k.wasm" "$n" >/dev/null; } 2>&1 | tail -n1 |
           awk '{ printf "%d", ($1 + $2) * 1000 }')
      if [[ -z "${best[$b]:-}" || $t -lt ${best[$b]} ]]; then best[$b]=$t; fi
    done
  done
  printf '%-14s' "$k"; for b in "$@"; do printf ' %8s' "${best[$b]}"; done; echo
  unset best
done
