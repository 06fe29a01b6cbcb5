#!/usr/bin/env bash
# genvm-calldata's command-line contract: --help, exit codes (0 ok, 1 bad input, 2 usage), the
# one-line error format, binary and hex modes, --lines numbering, and random's determinism.
#   cli_test.sh <path to genvm-calldata>
set -uo pipefail
cli="$1"
fails=0
check() {  # check <description> <expected> <actual>
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1"; echo "  expected: $2"; echo "  actual:   $3"; fails=$((fails + 1))
  fi
}
run() {  # run <stdin> <args...>: sets out, err, rc
  local tmp; tmp=$(mktemp)
  out=$(printf '%s' "$1" | "$cli" "${@:2}" 2>"$tmp"); rc=$?
  err=$(cat "$tmp"); rm -f "$tmp"
}

run '' --help;                        check "--help exits 0" 0 "$rc"
case "$out" in usage:*) ;; *) check "--help prints usage" "usage: ..." "$out";; esac
run '' encode --help;                 check "encode --help exits 0" 0 "$rc"

run '' ;                              check "no command is a usage error" 2 "$rc"
run '' frobnicate;                    check "unknown command exit" 2 "$rc"
check "usage error is one line" 1 "$(printf '%s\n' "$err" | wc -l)"
run '' encode --bogus;                check "unknown option exit" 2 "$rc"
run '' encode --lines;                check "--lines without --hex" 2 "$rc"
run '' random --count x;              check "non-numeric --count" 2 "$rc"

run '{"nd_outs": [b#61, b#6263]}' encode --hex
check "spec vector encodes" "0 0e076e645f6f757473150b61136263" "$rc $out"
run '0E076E645F6F757473150B61136263' decode --hex
check "spec vector decodes (upper-case hex accepted)" '0 {"nd_outs": [b#61, b#6263]}' "$rc $out"
out=$(printf '[1, "x"]' | "$cli" encode | "$cli" decode)
check "binary mode round trip" '[1, "x"]' "$out"

run '07' decode --hex
check "bad calldata: exit 1, one line with code and offset" \
  "1 genvm-calldata: reserved_type: reserved type 7 at byte offset 0" "$rc $err"
run '{"a": 1, "a": 2}' encode
check "bad text: exit 1, code and column" \
  "1 genvm-calldata: text_duplicate_key: duplicate map key at column 10" "$rc $err"
run 'zz' decode --hex
check "bad hex" "1 genvm-calldata: bad_hex: not a hex digit at character 1" "$rc $err"

run $'00\n09\n07\n' decode --hex --lines
check "--lines names the failing line" \
  "1 genvm-calldata: reserved_type: line 3: reserved type 7 at byte offset 0" "$rc $err"
run $'null\n-1\n"\\u00e9"\n' encode --hex --lines
check "--lines encodes one value per line" "0 00 02 14c3a9" "$rc $(echo $out)"

a=$("$cli" random --seed 5 --count 20 --hex); b=$("$cli" random --seed 5 --count 20 --hex)
check "random is deterministic per seed" "$a" "$b"
c=$("$cli" random --seed 6 --count 20 --hex)
[ "$a" != "$c" ] || { echo "FAIL: seeds 5 and 6 gave the same values"; fails=$((fails + 1)); }
t=$("$cli" random --seed 5 --count 20 | "$cli" encode --hex --lines)
check "random text and hex agree" "$a" "$t"

if [ "$fails" != 0 ]; then echo "cli_test: $fails failures"; exit 1; fi
echo "cli_test: PASS"
