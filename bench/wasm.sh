#!/usr/bin/env bash
# bench/wasm.sh: runs the wasm benchmark kernels (bench/wasm/*.c) natively, in our engine
# (genvm-wasm, without and with fuel), in node, in wabt's wasm-interp and optionally in wasm3;
# checks every engine prints the native checksum and prints min-of-RUNS times with the ratio
# to native. An engine that is not available is shown as n/a; a wrong checksum or a failed run
# is shown as MISMATCH/FAIL and makes the script exit 1.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: bench/wasm.sh [-r RUNS] [-b BUILD_DIR] [-s DIV] [-i DIV] [-e ENGINES] [-w] [KERNEL...]
  -r RUNS       runs per engine; the minimum time is reported (default 3)
  -w            report wall time instead of CPU time (user+sys of the process tree; the
                default, because the machines are shared and wall time carries queueing;
                note node's CPU time includes its background compiler and GC threads)
  -b BUILD_DIR  build folder holding bench/wasm/ and genvm-wasm (default: $GENVM_BUILD or build)
  -s DIV        divide every kernel's default iteration count by DIV (quick runs; default 1)
  -i DIV        further divide the count for wasm-interp, which is ~100-400x slower than
                native (default 20; its ratio is taken against native at the same count)
  -e ENGINES    comma-separated subset of ours,fuel,node,interp,wasm3 (default: all that are
                available); e.g. -e ours,fuel for quick before/after runs of our engine
  KERNEL...     subset of kernels (default: all built ones)
environment:
  GENVM_WASM=path   our engine's CLI (default: found under BUILD_DIR)
  FUEL=N            fuel for the "ours+fuel" column (default 1000000000000000)
  WASM3=path        adds a wasm3 column (a wasm3 binary built outside the project)
  NODE=path         node binary (default: node)
USAGE
}

runs=3
build="${GENVM_BUILD:-build}"
scale_div=1
interp_div=20
clock=cpu
engines="ours,fuel,node,interp,wasm3"
while getopts "r:b:s:i:e:wh" opt; do
  case "$opt" in
    r) runs="$OPTARG" ;;
    b) build="$OPTARG" ;;
    s) scale_div="$OPTARG" ;;
    i) interp_div="$OPTARG" ;;
    e) engines="$OPTARG" ;;
    w) clock=wall ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
for v in "$runs" "$scale_div" "$interp_div"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "wasm.sh: -r/-s/-i take a positive integer, got '$v'" >&2; exit 2; }
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src_dir="$here/wasm"
bin_dir="$build/bench/wasm"
[[ -d "$bin_dir" ]] || { echo "wasm.sh: $bin_dir not found: build target bench_wasm first (or pass -b)" >&2; exit 2; }

kernels=("$@")
if [[ ${#kernels[@]} -eq 0 ]]; then
  for f in "$src_dir"/*.c; do kernels+=("$(basename "$f" .c)"); done
fi

genvm_wasm="${GENVM_WASM:-}"
if [[ -z "$genvm_wasm" ]]; then
  genvm_wasm="$(find "$build" -type f -name genvm-wasm -perm -u+x 2>/dev/null | head -n1 || true)"
fi
[[ -n "$genvm_wasm" && -x "$genvm_wasm" ]] || genvm_wasm=""
fuel="${FUEL:-1000000000000000}"
node="${NODE:-node}"
command -v "$node" >/dev/null 2>&1 || node=""
wasm_interp="$(command -v wasm-interp || true)"
wasm3="${WASM3:-}"
[[ -z "$wasm3" || -x "$wasm3" ]] || { echo "wasm.sh: WASM3=$wasm3 is not executable" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# measure OUT_FILE CMD...: runs CMD $runs times; prints the minimum time in seconds (3
# decimals): CPU time of the process tree (user+sys) by default, wall time with -w; or "FAIL"
# if any run exits non-zero. The last run's stdout goes to OUT_FILE.
measure() {
  local out="$1"; shift
  local best="" i ms real user sys TIMEFORMAT='%3R %3U %3S'
  for ((i = 0; i < runs; i++)); do
    if ! { time "$@" >"$out" 2>"$tmp/stderr"; } 2>"$tmp/time"; then
      echo "wasm.sh: FAIL: $* : $(head -c 200 "$tmp/stderr" | head -n1)" >&2
      echo FAIL
      return
    fi
    read -r real user sys <"$tmp/time"
    if [[ "$clock" == wall ]]; then
      ms=$(awk -v r="$real" 'BEGIN { printf "%d", r * 1000 + 0.5 }')
    else
      ms=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1000 + 0.5 }')
    fi
    if [[ -z "$best" || $ms -lt $best ]]; then best=$ms; fi
  done
  printf '%d.%03d' $((best / 1000)) $((best % 1000))
}

# cell TIME REF_TIME GOT WANT: "1.234s 3.1x", or MISMATCH/FAIL. Runs in a subshell: the
# caller records failures (see record).
cell() {
  local t="$1" ref="$2" got="$3" want="$4"
  if [[ "$t" == FAIL ]]; then echo "FAIL"; return; fi
  if [[ "$got" != "$want" ]]; then echo "MISMATCH"; return; fi
  awk -v t="$t" -v r="$ref" 'BEGIN { if (r > 0) printf "%.3fs %.1fx", t, t / r; else printf "%.3fs", t }'
}
want_engine() { [[ ",$engines," == *",$1,"* ]]; }
status=0
record() { [[ "$1" != FAIL && "$1" != MISMATCH ]] || status=1; }

# The wasm-interp variant: a wrapper export "run" that calls bench(n), because wasm-interp
# only runs exports without parameters (--run-all-exports); it prints "run() => i64:N".
interp_module() {
  local k="$1" n="$2" out="$tmp/$k.interp.wasm"
  wasm2wat "$bin_dir/$k.nowasi.wasm" |
    sed -E "s/\\(export \"bench\" \\(func ([^)]*)\\)\\)/(func (export \"run\") (result i64) (call \\1 (i32.const $n)))/" \
      >"$tmp/$k.interp.wat"
  wat2wasm "$tmp/$k.interp.wat" -o "$out"
  echo "$out"
}

fmt="%-14s %6s %9s | %-15s %-15s %-15s %-24s %-15s\n"
printf "$fmt" kernel n native ours ours+fuel node "wasm-interp (n/$interp_div)" wasm3
printf "$fmt" -------------- ------ --------- --------------- --------------- --------------- ------------------------ ---------------
for k in "${kernels[@]}"; do
  [[ -f "$src_dir/$k.c" ]] || { echo "wasm.sh: unknown kernel '$k'" >&2; exit 2; }
  [[ -x "$bin_dir/$k.native" && -f "$bin_dir/$k.wasm" ]] || { echo "wasm.sh: $k not built in $bin_dir" >&2; exit 2; }
  default_n="$(grep -o 'BENCH_MAIN([0-9]*)' "$src_dir/$k.c" | tr -dc 0-9)"
  n=$((default_n / scale_div)); ((n > 0)) || n=1

  t_native="$(measure "$tmp/native.out" "$bin_dir/$k.native" "$n")"
  [[ "$t_native" != FAIL ]] || { echo "wasm.sh: $k.native failed: $(head -n1 "$tmp/stderr")" >&2; exit 1; }
  want="$(cat "$tmp/native.out")"

  ours="n/a"; ours_fuel="n/a"; c_node="n/a"; c_interp="n/a"; c_wasm3="n/a"
  if [[ -n "$genvm_wasm" ]] && want_engine ours; then
    t="$(measure "$tmp/o.out" "$genvm_wasm" run "$bin_dir/$k.wasm" "$n")"
    ours="$(cell "$t" "$t_native" "$(cat "$tmp/o.out")" "$want")"
  fi
  if [[ -n "$genvm_wasm" ]] && want_engine fuel; then
    t="$(measure "$tmp/o.out" "$genvm_wasm" run --fuel "$fuel" "$bin_dir/$k.wasm" "$n")"
    ours_fuel="$(cell "$t" "$t_native" "$(cat "$tmp/o.out")" "$want")"
  fi
  if [[ -n "$node" ]] && want_engine node; then
    t="$(measure "$tmp/o.out" "$node" --no-warnings --no-concurrent-marking "$src_dir/run_wasi.mjs" "$bin_dir/$k.wasm" "$n")"
    c_node="$(cell "$t" "$t_native" "$(cat "$tmp/o.out")" "$want")"
  fi
  if [[ -n "$wasm_interp" && -f "$bin_dir/$k.nowasi.wasm" ]] && want_engine interp; then
    ni=$((n / interp_div)); ((ni > 0)) || ni=1
    t_ref="$(measure "$tmp/ref.out" "$bin_dir/$k.native" "$ni")"
    mod="$(interp_module "$k" "$ni")"
    t="$(measure "$tmp/o.out" "$wasm_interp" "$mod" --run-all-exports)"
    got="$(sed -n 's/^run() => i64://p' "$tmp/o.out")"
    c_interp="$(cell "$t" "$t_ref" "$got" "$(cat "$tmp/ref.out")")"
  fi
  if [[ -n "$wasm3" ]] && want_engine wasm3; then
    t="$(measure "$tmp/o.out" "$wasm3" "$bin_dir/$k.wasm" "$n")"
    c_wasm3="$(cell "$t" "$t_native" "$(cat "$tmp/o.out")" "$want")"
  fi
  for c in "$ours" "$ours_fuel" "$c_node" "$c_interp" "$c_wasm3"; do record "$c"; done
  printf "$fmt" "$k" "$n" "${t_native}s" "$ours" "$ours_fuel" "$c_node" "$c_interp" "$c_wasm3"
done
echo "(min of $runs runs, $clock time; ratio = engine time / native time at the same iteration count)"
exit $status
