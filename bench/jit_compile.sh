#!/usr/bin/env bash
# bench/jit_compile.sh: how fast the JIT compiles real modules. For each module it runs
# `genvm-wasm compile FILE` (each load stage's CPU time, user+sys of the process) in N fresh
# processes, one load each, as the executor loads a module (a second load in one process finds
# its buffers' pages mapped already), and prints one row: the code section's size, the CPU ms
# of the JIT stage and of the whole load (read + validate + bodies + jit), each the minimum
# over the N processes, and MB/s = code section bytes / CPU time (10^6 bytes per second), for
# the JIT stage and for the whole load. Also the JIT code's digest: a compiler speed-up must
# leave it unchanged. The "(empty)" row (one function, no instructions) is the fixed cost of a
# load (its ms as the tool prints them, to 0.1; no MB/s).
#   usage: bench/jit_compile.sh [-b BUILD_DIR] [-r RUNS] [-m] [FILE.wasm...]
#   -b  build folder with tools/genvm-wasm/genvm-wasm (default: build)
#   -r  processes (loads) per module (default 5)
#   -m  load with --metering (fuel charges compiled in, as the executor's loads with fuel)
# Default modules: the empty one, CPython (build-runners/runners/cpython/dist/python.wasm, and
# python-det.wasm beside it loaded with --det) and bench/realworld's programs
# (/tmp/rw/w1/bin/*.wasm, or $REALWORLD_BIN), whichever exist.
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
  # First the fixed cost of a load: a module with one empty function (4 bytes of code section).
  empty="$(mktemp --suffix=.wasm)"; trap 'rm -f "$empty"' EXIT
  printf '\0asm\1\0\0\0\1\4\1\x60\0\0\3\2\1\0\n\4\1\2\0\x0b' >"$empty"
  files+=("$empty")
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
  # MB/s from the tool's own MB/s lines (computed from unrounded CPU times; its ms are rounded
  # to 0.1, a tenth of a small module's stage), the ms columns from them.
  name="$(basename "$f")"; [[ "$f" == "${empty:-}" ]] && name="(empty)"
  awk -v name="$name" '
    /^wasm bytes/ { code = $7; sub(",", "", code) }
    /^cpu ms/ { for (i = 1; i <= NF; ++i) { v = $(i + 1) + 0
                  if ($i == "jit" && (jms == "" || v < jms)) jms = v
                  if ($i == "total" && (tms == "" || v < tms)) tms = v } }
    /^jit MB\/s/ { if ($3 + 0 > jit) jit = $3 + 0 }
    /^load MB\/s/ { if ($3 + 0 > load) load = $3 + 0 }
    /code digest/ { digest = $NF }
    END { if (jit >= 1) jms = code / 1e3 / jit   # the empty module: MB/s rounds to 0, ms as printed
          if (load >= 1) tms = code / 1e3 / load
          j = jit >= 1 ? sprintf("%.1f", jit) : "-"; l = load >= 1 ? sprintf("%.1f", load) : "-"
          printf "%-16s %9.3f %8.2f %8s %8.2f %8s  %s\n", name, code / 1e6, jms, j, tms, l, digest }
  ' <<<"$out"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
