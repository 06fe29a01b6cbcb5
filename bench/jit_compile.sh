#!/usr/bin/env bash
# bench/jit_compile.sh: how fast the JIT compiles real modules. For each module it runs
# `genvm-wasm compile FILE` (each load stage's CPU time, user+sys of the process) in N fresh
# processes, one load each, as the executor loads a module (a second load in one process finds
# its buffers' pages mapped already), and prints one row: the code section's size, the CPU ms
# of the JIT stage and of the whole load (read + validate + bodies + jit), each the minimum
# over the N processes, and MB/s = code section bytes / CPU time (10^6 bytes per second), for
# the JIT stage and for the whole load. Also the JIT code's digest: a compiler speed-up must
# leave it unchanged.
#   usage: bench/jit_compile.sh [-b BUILD_DIR] [-r RUNS] [-m] [FILE.wasm...]
#   -b  build folder with tools/genvm-wasm/genvm-wasm (default: build)
#   -r  processes (loads) per module (default 5)
#   -m  load with --metering (fuel charges compiled in, as the executor's loads with fuel)
# Default modules: CPython (build-runners/runners/cpython/dist/python.wasm, and python-det.wasm
# beside it loaded with --det) and bench/realworld's programs (/tmp/rw/w1/bin/*.wasm, or
# $REALWORLD_BIN), whichever exist.
set -euo pipefail
build=build; runs=5; extra=()
while getopts "b:r:mh" o; do
  case "$o" in
    b) build="$OPTARG" ;; r) runs="$OPTARG" ;; m) extra+=(--metering) ;;
    *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; [[ "$o" == h ]] && exit 0; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
G="$build/tools/genvm-wasm/genvm-wasm"
[[ -x "$G" ]] || { echo "jit_compile.sh: no $G (build the genvm-wasm target)" >&2; exit 2; }
files=("$@")
if ((${#files[@]} == 0)); then
  cpy="$root/build-runners/runners/cpython"
  for f in "$cpy/dist/python.wasm" "$cpy/python-det.wasm" "${REALWORLD_BIN:-/tmp/rw/w1/bin}"/*.wasm; do
    [[ -f "$f" ]] && files+=("$f")
  done
fi
((${#files[@]})) || { echo "jit_compile.sh: no modules found (pass FILE.wasm...)" >&2; exit 2; }
nice_cmd=(nice -n -15); nice -n -15 true 2>/dev/null || nice_cmd=()
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $runs processes per module, CPU ms min; MB = 10^6 bytes of code section"
printf '%-16s %9s %8s %8s %8s %8s  %s\n' module code_MB jit_ms jit_MB/s load_ms load_MB/s digest
for f in "${files[@]}"; do
  det=(); [[ "$(basename "$f")" == *-det.wasm ]] && det=(--det)
  out=""
  for ((r = 0; r < runs; r++)); do
    one="$("${nice_cmd[@]}" "$G" compile "$f" "${det[@]}" "${extra[@]}")" ||
      { echo "jit_compile.sh: $f did not compile: $one" >&2; exit 1; }
    out+="$one"$'\n'
  done
  awk -v name="$(basename "$f")" '
    /^wasm bytes/ { code = $7; sub(",", "", code) }
    /^cpu ms/ { for (i = 1; i <= NF; ++i) { v = $(i + 1) + 0
                  if ($i == "jit" && (jit == "" || v < jit)) jit = v
                  if ($i == "total" && (total == "" || v < total)) total = v } }
    /code digest/ { digest = $NF }
    END { printf "%-16s %9.2f %8.1f %8.1f %8.1f %8.1f  %s\n", name, code / 1e6, jit, code / 1e3 / jit, total, code / 1e3 / total, digest }
  ' <<<"$out"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
