#!/usr/bin/env bash
# genvm-node against a hostile or damaged world (issue 19 items 7 and 13), through real
# executors: a read-only state is inspected and refuses writes in one line; a 0-byte state file
# is refused, not taken for a fresh chain; a malformed balance is an error and `check` says so;
# a kill -9 of the node leaves no host-socket folder once the next node starts; a CallContract
# chain runs deeper than two; a large result keeps a bounded text in its receipt; a huge
# integer result is not rendered in decimal (the node's work on it is bounded by size).
set -uo pipefail
b="$1"
node="$b/tools/genvm-node/genvm-node"
tn="$b/tests/node"
dir=$(mktemp -d /tmp/genvm-node-hard-XXXXXX)
chmod 755 "$dir"  # the read-only check runs as another user
trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"; [ -n "${victim:-}" ] && kill -9 "$victim" 2>/dev/null' EXIT
export TMPDIR="$dir/tmp"  # the runs' socket folders, here and nowhere else
mkdir -p "$TMPDIR"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
for f in "$tn/relay.wasm" "$tn/big.wasm" "$tn/devloop.wasm"; do
  [ -e "$f" ] || { echo "FAIL: no $f (build target genvm_node_test_contracts)"; echo "0 passed, 1 failed"; exit 1; }
done
# one_line NAME CODE PATTERN CMD...: exit CODE, exactly one stderr line matching PATTERN.
one_line() {
  local name="$1" want="$2" pat="$3"; shift 3
  "$@" >"$dir/out" 2>"$dir/err" </dev/null
  local rc=$?
  if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "$pat" "$dir/err"; then
    ok
  else
    bad "$name: rc=$rc (want $want): $(head -3 "$dir/err" | cut -c1-300)"
  fi
}
address_of() { sed -n 's/.*"address":"\(0x[0-9a-f]*\)".*/\1/p'; }
db="$dir/s.db"

# A CallContract chain: each relay calls the next; n hops answer n.
relays=()
for i in 1 2 3 4; do relays+=("$("$node" --state "$db" --validators 1 --json deploy "$tn/relay.wasm" 2>/dev/null | address_of)"); done
[ ${#relays[3]} -eq 42 ] && ok || bad "deploy relays"
r=("${relays[@]}")
[ "$("$node" --state "$db" view "${r[0]}" hop "${r[1]}" "${r[2]}" "${r[3]}")" = "Return 3" ] && ok || bad "a view 4 VMs deep"
out=$("$node" --state "$db" --validators 1 call "${r[0]}" hop "${r[1]}" "${r[2]}" "${r[3]}" "${r[0]}" "${r[1]}" "${r[2]}" "${r[3]}" 2>&1)
grep -q '^  result: Return 7$' <<<"$out" && ok || bad "a call 8 VMs deep: $(head -3 <<<"$out")"
# A contract calling itself: 21 VMs deep is fine; past what the RAM budget pays for (every VM
# costs the spec's vm_spawn_cost, 128 MiB, so 31 VMs at 4 GiB) the chain ends in an error, not a
# crash or a hang.
[ "$("$node" --state "$db" --timeout 30 view "${r[0]}" deep 20)" = "Return 20" ] && ok || bad "a view 21 VMs deep"
"$node" --state "$db" --timeout 60 view "${r[0]}" deep 600 >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 3 ] && ! grep -q '^Return' "$dir/out" && ok || bad "600 VMs deep: rc=$rc $(head -2 "$dir/out" "$dir/err" | cut -c1-200)"

# A large result: the receipt keeps a bounded text (64 KiB and a note), not 2 characters a byte.
bigc=$("$node" --state "$db" --validators 1 --json deploy "$tn/big.wasm" 2>/dev/null | address_of)
[ ${#bigc} -eq 42 ] && ok || bad "deploy big"
"$node" --state "$db" --validators 1 --timeout 30 call "$bigc" bytes 2097152 >"$dir/out" 2>&1 && ok || bad "call bytes 2 MiB: $(head -3 "$dir/out")"
len=$(sqlite3 "$db" "SELECT length(result_text) FROM transactions ORDER BY id DESC LIMIT 1")
[ "${len:-0}" -gt 65536 ] && [ "${len:-0}" -lt 66000 ] && ok || bad "the 2 MiB result's receipt text is $len characters"
sqlite3 "$db" "SELECT result_text FROM transactions ORDER BY id DESC LIMIT 1" | grep -q '(cut: the full text would be about 4194306 characters; 65536 kept)$' &&
  ok || bad "no cut note in the receipt"
# A 256 KiB integer (631,306 decimal digits): shown as a note with its size, never converted.
"$node" --state "$db" --timeout 30 view "$bigc" int 262144 >"$dir/out" 2>"$dir/err"
[ "$(wc -c <"$dir/out")" -lt 200 ] && grep -qF 'Return "<integer of 2097152 bits, not rendered: 0xffffffffffffffff...>" ... (cut: the full text would be about 631307 characters; 65536 kept)' "$dir/out" &&
  ok || bad "the 256 KiB integer: $(wc -c <"$dir/out") bytes: $(cut -c1-200 "$dir/out")"
[ "$("$node" --state "$db" view "$bigc" int 4)" = "Return 4294967295" ] && ok || bad "a small integer is exact"
# --result-text sets the bound: 300 characters of a 5,000-byte result, then the note.
"$node" --state "$db" --result-text 300 view "$bigc" bytes 5000 >"$dir/out" 2>"$dir/err"
grep -qx 'Return b#\(5a\)\{149\} \.\.\. (cut: the full text would be about 10002 characters; 300 kept)' "$dir/out" && ok ||
  bad "--result-text 300: $(cut -c1-100 "$dir/out") $(cat "$dir/err")"
one_line "--result-text 10" 2 '^genvm-node: --result-text needs a number of characters from 256 to 16777216$' \
  "$node" --state "$db" --result-text 10 view "$bigc" bytes 1

# A 0-byte state file is not a fresh chain: refused in one line and left as it is.
: >"$dir/empty.db"
one_line "fund into a 0-byte file" 2 'is an empty file (0 bytes), not a genvm-node state' \
  "$node" --state "$dir/empty.db" fund 0x00000000000000000000000000000000000000b1 5
[ ! -s "$dir/empty.db" ] && ok || bad "the 0-byte file was written"
one_line "check a 0-byte file" 2 'is an empty file' "$node" --state "$dir/empty.db" check

# A malformed balance blob is an error, and check reports it (the sender's zero balance made
# 1 byte long: the sum is unchanged, so only a per-row check sees it).
cp "$db" "$dir/bal.db"
sqlite3 "$dir/bal.db" "UPDATE accounts SET balance = x'00' WHERE address = x'00000000000000000000000000000000000000a1'"
one_line "check a 1-byte balance" 1 'balance that is not a u256' "$node" --state "$dir/bal.db" check
one_line "a call whose sender's balance is 1 byte" 1 'is not a u256' \
  "$node" --state "$dir/bal.db" --validators 1 --value 1 call "$bigc" bytes 1

# A read-only state (file and folder, for a user who cannot write them): check, view, tx read
# it; a write says read-only in one line.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  mkdir "$dir/ro" && cp "$db" "$dir/ro/s.db" && chmod 444 "$dir/ro/s.db" && chmod 555 "$dir/ro"
  as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups -- "$@"; }
  chmod 777 "$TMPDIR"
  as_nobody "$node" --state "$dir/ro/s.db" check >"$dir/out" 2>"$dir/err" && grep -qx consistent "$dir/out" && ok ||
    bad "check read-only: $(cat "$dir/err")"
  [ "$(as_nobody "$node" --state "$dir/ro/s.db" view "${r[0]}" hop "${r[1]}" 2>"$dir/err")" = "Return 1" ] && ok ||
    bad "view read-only: $(cat "$dir/err")"
  as_nobody "$node" --state "$dir/ro/s.db" tx 1 >"$dir/out" 2>"$dir/err" && grep -q '^tx 1 ' "$dir/out" && ok ||
    bad "tx read-only: $(cat "$dir/err")"
  one_line "fund read-only" 2 'is read-only' as_nobody "$node" --state "$dir/ro/s.db" fund 0x00000000000000000000000000000000000000b1 5
  one_line "call read-only" 2 'is read-only' as_nobody "$node" --state "$dir/ro/s.db" call "${r[0]}" hop
  chmod 755 "$TMPDIR"
else
  echo "skip: the read-only checks need root and setpriv (to run as a user who cannot write)"
fi

# kill -9 of a node mid-run leaves its socket folder; the next node's start removes it.
dl=$("$node" --state "$db" --validators 1 --json deploy "$tn/devloop.wasm" 2>/dev/null | address_of)
"$node" --state "$db" --validators 1 --rounds 1 --timeout 30 call "$dl" forever >/dev/null 2>&1 &
victim=$!
for _ in $(seq 100); do [ -S "$(ls -d "$TMPDIR"/genvm-node-* 2>/dev/null | head -1)/host.sock" ] && break; sleep 0.1; done
left=$(ls -d "$TMPDIR"/genvm-node-* 2>/dev/null)
[ -n "$left" ] && ok || bad "no socket folder while the node ran"
kill -9 "$victim"
wait "$victim" 2>/dev/null
victim=
sleep 2.5  # the sweep leaves sockets younger than 2 s alone (a node between bind and listen)
[ -d "$left" ] && ok || bad "the killed node's folder was already gone (nothing to test)"
"$node" --state "$db" view "${r[0]}" hop >/dev/null 2>&1
[ ! -e "$left" ] && ok || bad "the killed node's folder $left is still there"
[ -z "$(ls -A "$TMPDIR")" ] && ok || bad "socket folders left: $(ls "$TMPDIR")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
