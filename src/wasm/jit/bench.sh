#!/usr/bin/env bash
# src/wasm/jit/bench.sh: the interpreter against the JIT on the bench/wasm kernels (their no-WASI
# builds: `genvm-wasm invoke K.nowasi.wasm bench N --engine interp|jit`), run alternately, CPU
# time (user+sys, ms), minimum of RUNS, at `nice -n -15` when allowed; checks both print the
# same checksum. Prints the load average before and after (the machine may be shared).
#   usage: src/wasm/jit/bench.sh [-b BUILD_DIR] [-s DIV] [-r RUNS] [-f]
#   -b  build folder (default: build)  -s  divide iteration counts (default 8)
#   -r  runs per engine (default 3)    -f  with --fuel 1000000000000000 (metered code)
set -euo pipefail
build=build; div=8; runs=3; fuel=()
while getopts "b:s:r:fh" o; do
  case "$o" in
    b) build="$OPTARG" ;; s) div="$OPTARG" ;; r) runs="$OPTARG" ;; f) fuel=(--fuel 1000000000000000) ;;
    *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; [[ "$o" == h ]] && exit 0; exit 2 ;;
  esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
G="$build/tools/genvm-wasm/genvm-wasm"; B="$build/bench/wasm"
[[ -x "$G" ]] || { echo "bench.sh: no $G (build the genvm-wasm and bench_wasm targets)" >&2; exit 2; }
nice_cmd=(nice -n -15); nice -n -15 true 2>/dev/null || nice_cmd=()
t_file="$(mktemp)"; trap 'rm -f "$t_file"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %8s %8s %7s  %s\n' kernel interp jit speedup checksum
for src in "$root"/bench/wasm/*.c; do
  k="$(basename "$src" .c)"
  [[ -f "$B/$k.nowasi.wasm" ]] || continue
  n=$(( $(grep -o 'BENCH_MAIN([0-9]*)' "$src" | tr -dc 0-9) / div )); ((n > 0)) || n=1
  declare -A best=() out=()
  for ((r = 0; r < runs; r++)); do
    for e in interp jit; do
      out[$e]=$(/usr/bin/time -o "$t_file" -f "%U %S" "${nice_cmd[@]}" "$G" invoke "${fuel[@]}" "$B/$k.nowasi.wasm" bench "$n" --engine "$e" 2>/dev/null | head -n1)
      t=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$t_file")
      if [[ -z "${best[$e]:-}" || $t -lt ${best[$e]} ]]; then best[$e]=$t; fi
    done
  done
  same=same; [[ "${out[interp]}" == "${out[jit]}" ]] || same="DIFFERENT: ${out[interp]} vs ${out[jit]}"
  printf '%-14s %8s %8s %7s  %s\n' "$k" "${best[interp]}" "${best[jit]}" \
    "$(awk -v a="${best[interp]}" -v b="${best[jit]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" "$same"
  unset best out
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
