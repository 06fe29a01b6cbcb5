#!/usr/bin/env bash
# genvm-wasm's --fuse-off NAMES / --no-fuse (bench/fusion_families.py relies on them): an
# unknown family name is refused with one error line that lists the families (exit 2, before
# anything loads), a known one leaves exactly that family out of the slot code, --no-fuse
# leaves every fused form out, and results do not change.
set -euo pipefail
bin="$1"
command -v wat2wasm >/dev/null || { echo "SKIP: wat2wasm (Debian package wabt) not installed"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/m.wat" <<'WAT'
(module (func (export "f") (param i32) (result i32) (i32.add (local.get 0) (i32.const 5))))
WAT
wat2wasm "$tmp/m.wat" -o "$tmp/m.wasm"
"$bin" --help | grep -q -- "--fuse-off NAMES" || fail "--help does not document --fuse-off"
"$bin" --help | grep -q -- "--no-fuse" || fail "--help does not document --no-fuse"
for cmd in "invoke $tmp/m.wasm f 3" "run $tmp/m.wasm" "dump $tmp/m.wasm" "compile $tmp/m.wasm"; do
  set +e
  err=$("$bin" $cmd --fuse-off immediate,nosuch 2>&1 >/dev/null); rc=$?
  set -e
  [ $rc = 2 ] || fail "$cmd with a bad family: exit $rc, want 2"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "$cmd: not one error line: $err"
  [[ "$err" == "genvm-wasm: "*"--fuse-off: unknown fusion family 'nosuch' (families: immediate,"* ]] ||
    fail "$cmd: unclear error: $err"
done
set +e
err=$("$bin" invoke "$tmp/m.wasm" f 3 --fuse-off 2>&1); rc=$?
set -e
[ $rc = 2 ] && [[ "$err" == *"--fuse-off needs NAMES"* ]] || fail "missing NAMES: rc=$rc $err"
"$bin" dump "$tmp/m.wasm" 0 | grep -q 'i32.add_imm' || fail "all on: no add_imm"
"$bin" dump "$tmp/m.wasm" 0 --fuse-off load | grep -q 'i32.add_imm' || fail "another family left out: no add_imm"
! "$bin" dump "$tmp/m.wasm" 0 --fuse-off immediate | grep -q '_imm' || fail "--fuse-off immediate still fuses"
! "$bin" dump "$tmp/m.wasm" 0 --no-fuse | grep -q '_imm' || fail "--no-fuse still fuses"
for opt in "" "--no-fuse" "--fuse-off immediate"; do
  [ "$("$bin" invoke "$tmp/m.wasm" f 3 $opt)" = 8 ] || fail "invoke with '$opt'"
done
echo "fuse options ok"
