#!/usr/bin/env bash
# bench/blake3.sh: BLAKE3 throughput of `genvm-hash blake3 FILE` against
# `b3sum --num-threads 1 FILE` on the same (page-cache warm) file, in interleaved runs, so
# both see the same machine load. Prints min and median wall time, min CPU time (user+sys of
# the process, which other processes on a busy machine disturb less), GB/s (1e9 bytes/s) and
# the ratio ours/b3sum of throughput (> 1 = ours faster). Exits 1 if the digests differ.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: bench/blake3.sh [-r RUNS] [-b BUILD_DIR] [-s SIZE_MIB] [FILE]
  -r RUNS       interleaved runs per tool (default 7)
  -b BUILD_DIR  build folder holding tools/genvm-hash/genvm-hash (default: $GENVM_BUILD or build)
  -s SIZE_MIB   size of the random file created when FILE does not exist (default 1024)
  FILE          input file (default /tmp/genvm_blake3_bench.bin; created if absent, kept)
environment:
  GENVM_HASH=path      our CLI (default: found under BUILD_DIR)
  GENVM_BLAKE3_ISA=... force our path (portable, sse41, avx2, avx512)
USAGE
}

runs=7
build="${GENVM_BUILD:-build}"
size_mib=1024
while getopts "r:b:s:h" opt; do
  case "$opt" in
    r) runs="$OPTARG" ;;
    b) build="$OPTARG" ;;
    s) size_mib="$OPTARG" ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
file="${1:-/tmp/genvm_blake3_bench.bin}"

ours="${GENVM_HASH:-$build/tools/genvm-hash/genvm-hash}"
[[ -x "$ours" ]] || { echo "bench/blake3.sh: $ours not found; build target genvm-hash or set GENVM_HASH" >&2; exit 1; }
command -v b3sum >/dev/null || { echo "bench/blake3.sh: b3sum not installed" >&2; exit 1; }

if [[ ! -f "$file" ]]; then
  echo "creating $file ($size_mib MiB of random bytes)"
  head -c "$((size_mib * 1048576))" /dev/urandom >"$file.tmp"
  mv "$file.tmp" "$file"
fi
bytes=$(stat -c %s "$file")

# Warm the page cache and check both tools agree before timing anything.
cat "$file" >/dev/null
digest_ours=$("$ours" blake3 "$file" | cut -d' ' -f1)
digest_ref=$(b3sum --num-threads 1 "$file" | cut -d' ' -f1)
if [[ "$digest_ours" != "$digest_ref" ]]; then
  echo "bench/blake3.sh: DIGEST MISMATCH ours=$digest_ours b3sum=$digest_ref" >&2
  exit 1
fi

# Children's user+sys CPU seconds so far, from the `times` builtin (ms resolution). `times`
# must run in this shell, not in a $(...) subshell, so it goes through a file.
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
cpu_from_file() {
  tail -n 1 "$times_file" | awk '
    function sec(t,  m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
    { printf "%.6f", sec($1) + sec($2) }'
}

# time_one CMD...: runs CMD, sets `sample` to "wall_seconds cpu_seconds".
time_one() {
  local c0 c1 t0 t1
  times >"$times_file"
  c0=$(cpu_from_file)
  t0=$EPOCHREALTIME
  "$@" >/dev/null
  t1=$EPOCHREALTIME
  times >"$times_file"
  c1=$(cpu_from_file)
  sample="$(awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" 'BEGIN { printf "%.6f %.6f", b - a, d - c }')"
}
ours_samples=()
ref_samples=()
for ((i = 0; i < runs; i++)); do
  time_one "$ours" blake3 "$file"
  ours_samples+=("$sample")
  time_one b3sum --num-threads 1 "$file"
  ref_samples+=("$sample")
done

# stats: prints "min_wall median_wall min_cpu" of the "wall cpu" samples given as arguments.
stats() {
  local walls cpus
  walls=$(printf '%s\n' "$@" | cut -d' ' -f1 | sort -g)
  cpus=$(printf '%s\n' "$@" | cut -d' ' -f2 | sort -g)
  printf '%s\n' "$walls" | awk -v cpu="$(printf '%s\n' "$cpus" | head -n 1)" '{ w[NR] = $1 }
    END { med = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2;
          printf "%.4f %.4f %.4f", w[1], med, cpu }'
}
read -r o_min o_med o_cpu <<<"$(stats "${ours_samples[@]}")"
read -r r_min r_med r_cpu <<<"$(stats "${ref_samples[@]}")"

isa=$("$ours" --print-isa)
echo "file $file: $bytes bytes, $runs interleaved runs each, page cache warm, digests equal"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v bytes="$bytes" -v isa="$isa" \
    -v om="$o_min" -v od="$o_med" -v oc="$o_cpu" -v rm="$r_min" -v rd="$r_med" -v rc="$r_cpu" 'BEGIN {
  printf "%-30s %10s %8s %12s %10s %8s\n", "", "min wall", "GB/s", "median wall", "min cpu", "GB/s";
  printf "%-30s %9.4fs %8.2f %11.4fs %9.4fs %8.2f\n", "genvm-hash blake3 (" isa ")", om, bytes / om / 1e9, od, oc, bytes / oc / 1e9;
  printf "%-30s %9.4fs %8.2f %11.4fs %9.4fs %8.2f\n", "b3sum --num-threads 1", rm, bytes / rm / 1e9, rd, rc, bytes / rc / 1e9;
  printf "ratio ours/b3sum throughput: %.2f (min wall), %.2f (median wall), %.2f (min cpu)\n", rm / om, rd / od, rc / oc;
}'
