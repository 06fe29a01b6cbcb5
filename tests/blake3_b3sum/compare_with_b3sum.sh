#!/bin/sh
# usage: compare_with_b3sum.sh PATH/TO/genvm-hash
#
# For random inputs of lengths around block (64), chunk (1024) and subtree (4096 * k) edges
# and some large ones, checks that `genvm-hash blake3` prints exactly what `b3sum` prints:
# default mode, --keyed, --derive-key, --length 131, and stdin ("-"), once per instruction-set
# path (GENVM_BLAKE3_ISA) this CPU supports. A failing input is kept and its path printed.
# Exit 0 = all equal, 1 = a difference or error, 77 = b3sum missing (ctest reports a skip).
set -eu

tool=${1:?usage: compare_with_b3sum.sh PATH/TO/genvm-hash}
if ! command -v b3sum >/dev/null 2>&1; then
  echo "SKIP: b3sum is not installed (Debian package b3sum)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/blake3_b3sum.XXXXXX")
keep=""
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT

failures=0
checks=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
  keep=1
}

# expect_same DESCRIPTION OURS_OUTPUT B3SUM_OUTPUT
expect_same() {
  checks=$((checks + 1))
  if [ "$2" != "$3" ]; then
    fail "$1"
    echo "  ours:  $2"
    echo "  b3sum: $3"
  fi
}

head -c 32 /dev/urandom >"$work/key"
context="genvm-cpp blake3_b3sum test 2026-11-30 derive context"

lengths="0 1 2 63 64 65 127 128 129 1023 1024 1025 2047 2048 2049 3072 3073 4095 4096 4097"
for k in 2 3 4 5 7 8 15 16 17 31 32 33 64 100; do
  lengths="$lengths $((4096 * k - 1)) $((4096 * k)) $((4096 * k + 1))"
done
lengths="$lengths 262143 262144 262145 1048576 $((1048576 + 7)) $((4 * 1048576 - 1)) $((16 * 1048576 + 1023))"

# Every path the CPU can run; an unsupported one makes genvm-hash refuse with one line.
isas=""
for isa in portable sse41 avx2 avx512; do
  if GENVM_BLAKE3_ISA=$isa "$tool" blake3 "$work/key" >/dev/null 2>"$work/err"; then
    isas="$isas $isa"
    # Without this the loop below could test one path four times if the override were ignored.
    expect_same "GENVM_BLAKE3_ISA=$isa selects that path" \
      "$(GENVM_BLAKE3_ISA=$isa "$tool" --print-isa)" "$isa"
  else
    echo "note: path $isa not run: $(cat "$work/err")"
  fi
done
[ -n "$isas" ] || { echo "FAIL: genvm-hash ran on no path"; exit 1; }
echo "paths:$isas"

for len in $lengths; do
  f="$work/in_$len"
  head -c "$len" /dev/urandom >"$f"
  size=$(wc -c <"$f")
  [ "$size" -eq "$len" ] || { echo "FAIL: could not make a $len-byte input"; exit 1; }
  ref=$(b3sum "$f")
  ref_keyed=$(b3sum --keyed "$f" <"$work/key")
  ref_derive=$(b3sum --derive-key "$context" "$f")
  ref_long=$(b3sum --length 131 "$f")
  ref_stdin=$(b3sum <"$f")
  for isa in $isas; do
    export GENVM_BLAKE3_ISA=$isa
    expect_same "hash, $len bytes, $isa ($f)" "$("$tool" blake3 "$f")" "$ref"
    expect_same "keyed, $len bytes, $isa ($f)" "$("$tool" blake3 --keyed "$f" <"$work/key")" "$ref_keyed"
    expect_same "derive-key, $len bytes, $isa ($f)" \
      "$("$tool" blake3 --derive-key "$context" "$f")" "$ref_derive"
    expect_same "length 131, $len bytes, $isa ($f)" "$("$tool" blake3 --length 131 "$f")" "$ref_long"
    expect_same "stdin, $len bytes, $isa ($f)" "$("$tool" blake3 <"$f")" "$ref_stdin"
  done
  unset GENVM_BLAKE3_ISA
  [ "$failures" -eq 0 ] && rm -f "$f"
done

# Several files in one call, as b3sum prints them.
printf 'abc' >"$work/a"
printf '' >"$work/b"
expect_same "two files" "$("$tool" blake3 "$work/a" "$work/b")" "$(b3sum "$work/a" "$work/b")"

# Bad input: non-zero exit and exactly one line on stderr.
expect_error() {
  desc=$1
  shift
  checks=$((checks + 1))
  if "$@" >/dev/null 2>"$work/err" </dev/null; then
    fail "$desc: exit status 0"
  elif [ "$(wc -l <"$work/err")" -ne 1 ]; then
    fail "$desc: stderr is not one line: $(cat "$work/err")"
  fi
}
expect_error "missing file" "$tool" blake3 "$work/does-not-exist"
expect_error "unknown algorithm" "$tool" md5 "$work/a"
expect_error "bad length" "$tool" blake3 --length 12x "$work/a"
expect_error "short key" "$tool" blake3 --keyed "$work/a"
expect_error "keyed and derive-key" "$tool" blake3 --keyed --derive-key x "$work/a"
expect_error "unknown path" env GENVM_BLAKE3_ISA=avx9000 "$tool" blake3 "$work/a"

if [ "$failures" -ne 0 ]; then
  echo "$failures of $checks checks failed; inputs kept in $work"
  exit 1
fi
echo "all $checks checks equal to b3sum"
