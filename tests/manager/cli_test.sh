#!/usr/bin/env bash
# genvm-manager's command line and process contract, without npm: --help, one-line errors on bad
# input, SIGTERM exits 0, and kill -9 of the manager leaves no executor tree behind (the
# supervisor's guard; this check fails if the guard is removed).
#   cli_test.sh <path to genvm-manager>
set -u
bin=$1
fail() { echo "manager cli_test: FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$bin" --help | grep -q -- "--config FILE" || fail "--help does not describe --config"
for args in "--bogus" "--config $dir/none.yaml" "--manifest-path $dir/none.yaml" "--port 99999" "--socket $dir/s --port 1"; do
  out=$("$bin" $args 2>&1 >/dev/null); rc=$?
  [ "$rc" -ne 0 ] || fail "'$args' exited 0"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$args' printed more than one line: $out"
done
printf 'permits: {sync: 0}\n' > "$dir/bad.yaml"
out=$("$bin" --config "$dir/bad.yaml" 2>&1); rc=$?
[ "$rc" -ne 0 ] && echo "$out" | grep -q "permits.sync" || fail "bad config not reported: $out"

# SIGTERM: clean exit.
printf 'executor: [sh, -c, '"'"'eval "$3"'"'"', sh]\nexecutor_protocol: plain\nextra_args: {untrusted_allowed: ["*"]}\n' > "$dir/cfg.yaml"
"$bin" --config "$dir/cfg.yaml" --port 0 --print-port > "$dir/port" 2> "$dir/log" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
[ -s "$dir/port" ] || fail "no port printed: $(cat "$dir/log")"
kill -TERM $pid
wait $pid; rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM exit status $rc"
grep -q '"shutdown_done"' "$dir/log" || fail "no shutdown_done in the log"

# kill -9: start a run through the HTTP adapter (calldata body built by hand: a map with the
# required fields), then SIGKILL the manager and check its executor tree dies.
"$bin" --config "$dir/cfg.yaml" --port 0 --print-port > "$dir/port2" 2> "$dir/log2" &
pid=$!
for _ in $(seq 100); do [ -s "$dir/port2" ] && break; sleep 0.05; done
port=$(cat "$dir/port2")
pidfile="$dir/pids"
python3 - "$pidfile" > "$dir/body" <<'PY'
import sys
def uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7f; n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n: return bytes(out)
# Calldata: a ULEB128 of (payload << 3 | type); types 1 int, 3 bytes, 4 string, 5 array, 6 map
# (keys as length-prefixed UTF-8, sorted), 0 special (null 0, false 0x08, true 0x10, address
# 0x18 + 20 bytes).
def s(x): b = x.encode(); return uleb((len(b) << 3) | 4) + b
def by(x): return uleb((len(x) << 3) | 3) + x
def i(n): return uleb((n << 3) | 1)
def arr(xs): return uleb((len(xs) << 3) | 5) + b"".join(xs)
def key(k): b = k.encode(); return uleb(len(b)) + b
def mp(d): return uleb((len(d) << 3) | 6) + b"".join(key(k) + v for k, v in sorted(d.items(), key=lambda kv: kv[0].encode()))
NULL, FALSE, TRUE = b"\x00", b"\x08", b"\x10"
def addr(fill): return b"\x18" + bytes([fill]) * 20
script = "sleep 1000 & echo $$ $! > %s; wait" % sys.argv[1]
message = mp({"contract_address": addr(1), "sender_address": addr(0xaa), "origin_address": addr(0xaa),
              "signer_address": addr(0xaa), "chain_id": i(61999), "value": i(0), "is_init": FALSE})
body = mp({"selector": mp({"kind": s("major"), "major": i(0)}), "message": message, "is_sync": TRUE, "bucket_totals": arr([]),
           "host_data": s("{}"), "timestamp": s("2026-01-01T00:00:00Z"), "host": s("x"),
           "calldata": by(b""), "code": NULL, "leader_nondet_results": NULL,
           "initial_time_units_allocation": i(1000), "extra_args": arr([s(script)])})
sys.stdout.buffer.write(body)
PY
resp=$(curl -s --data-binary @"$dir/body" -H 'content-type: application/octet-stream' "http://127.0.0.1:$port/genvm/run")
echo "$resp" | grep -q '"result":"started"' || fail "run did not start: $resp"
for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.05; done
read -r shell_pid sleep_pid < "$pidfile" || fail "the executor wrote no pids"
kill -0 "$shell_pid" && kill -0 "$sleep_pid" || fail "the executor tree is not running"
kill -9 $pid
wait $pid 2>/dev/null
alive() {  # running (a zombie waiting for init runs no more)
  [ -e "/proc/$1/stat" ] || return 1
  local state; state=$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)
  [ "$state" != "Z" ]
}
for _ in $(seq 200); do
  alive "$shell_pid" || alive "$sleep_pid" || break
  sleep 0.05
done
if alive "$shell_pid" || alive "$sleep_pid"; then
  kill -9 "$shell_pid" "$sleep_pid" 2>/dev/null
  fail "kill -9 of the manager left the executor tree ($shell_pid $sleep_pid) running"
fi
echo "manager cli_test: PASS"
