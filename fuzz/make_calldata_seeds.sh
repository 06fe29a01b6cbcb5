#!/usr/bin/env bash
# Regenerates the committed seed corpus fuzz/calldata_fuzz/ for the calldata_fuzz target:
# seeded random values (binary and text form) from genvm-calldata, the spec's test vector, and
# one near-miss per malformed class so the fuzzer starts next to every rejection path.
#   fuzz/make_calldata_seeds.sh [path/to/genvm-calldata]
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${1:-build/tools/genvm-calldata/genvm-calldata}"
out=fuzz/calldata_fuzz
rm -rf "$out"; mkdir -p "$out"

i=0
while IFS= read -r text; do
  i=$((i + 1))
  printf '%s' "$text" | "$cli" encode >"$out/random_bin_$(printf %02d $i)"
  if [ $((i % 3)) = 0 ]; then printf '%s' "$text" >"$out/random_text_$(printf %02d $i)"; fi
done < <("$cli" random --seed 1 --count 30 --depth 3)

hex() { printf "$(printf %s "$2" | sed "s/../\\\\x&/g")" >"$out/$1"; }
hex spec_vector           0e076e645f6f757473150b61136263
hex big_int_2pow200       818080808080808080808080808080808080808080808080808080808001
hex address               18000102030405060708090a0b0c0d0e0f10111213
hex bad_non_minimal       898000
hex bad_length_2pow32     838080808001
hex bad_unsorted_keys     16016200016100
hex bad_duplicate_keys    16016100016100
hex bad_trailing          0000
hex bad_utf8_surrogate    14eda080
hex bad_reserved_atom     20
hex bad_reserved_type     07
hex bad_truncated_array   1500
hex bad_huge_claim        fdffffff7f00
printf '%s' '{"b": [true, -123456789012345678901234567890], "a": "\u00e9\ud83d\ude00"}' >"$out/text_map"
printf '%s' '[b#deadbeef, addr#00112233445566778899aabbccddeeff00112233, null]' >"$out/text_array"
printf '%s' '[[[[{"": [1, 2]}]]]]' >"$out/text_nested"
echo "wrote $(ls "$out" | wc -l) seeds to $out"
