#!/usr/bin/env bash
# Proves that a change to src/wasm leaves the compiled code alone: records `genvm-wasm dump`
# listings (every function's slot code and the trap-offset table, under three LoadOptions sets)
# of a fixed corpus, and on the next invocation lists again and diffs against the record.
#
#   tools/wasm-dump-diff.sh BUILD_DIR OUT_DIR [EXTRA.wasm...]
#
# First run (OUT_DIR/baseline missing): freezes the corpus into OUT_DIR/corpus and writes
# OUT_DIR/baseline. Every later run writes OUT_DIR/current and compares: exit 0 when identical,
# 1 with a diff summary otherwise. The corpus: BUILD_DIR/bench/wasm/*.wasm,
# BUILD_DIR/tests/conformance/*.wasm, any EXTRA.wasm given, and every module of the spec
# testsuite ($GENVM_SPEC_TESTSUITE, default /work/shared/testdata/wasm-spec, plus the
# tail-call folder) converted with wabt's wast2json: the binary modules of `module`,
# assert_invalid, assert_malformed, assert_unlinkable and assert_uninstantiable commands (one
# that does not load lists as its error line, so reader and validator messages and offsets are
# compared too).
set -euo pipefail

if [[ $# -lt 2 || "$1" == "--help" || "$1" == "-h" ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ( "$1" == "--help" || "$1" == "-h" ) ]] && exit 0
  exit 2
fi
build=$1
out=$2
shift 2
tool="$build/tools/genvm-wasm/genvm-wasm"
[[ -x "$tool" ]] || { echo "wasm-dump-diff: no genvm-wasm at $tool (build target genvm-wasm)" >&2; exit 2; }

spec_dirs=("${GENVM_SPEC_TESTSUITE:-/work/shared/testdata/wasm-spec}" "${GENVM_SPEC_TESTSUITE_TAIL_CALL:-/work/shared/testdata/wasm-spec-tail-call}")

freeze_corpus() {
  local corpus=$1
  mkdir -p "$corpus/spec" "$corpus/build"
  for f in "$build"/bench/wasm/*.wasm "$build"/tests/conformance/*.wasm "$@"; do
    [[ -f "$f" ]] && cp "$f" "$corpus/build/"
  done
  command -v wast2json >/dev/null || { echo "wasm-dump-diff: wast2json (wabt) not found" >&2; exit 2; }
  local tmp
  tmp=$(mktemp -d)
  for dir in "${spec_dirs[@]}"; do
    [[ -d "$dir" ]] || continue
    for wast in "$dir"/*.wast; do
      local stem
      stem=$(basename "$wast" .wast)
      wast2json --enable-tail-call "$wast" -o "$tmp/$stem.json" 2>/dev/null || continue
    done
  done
  # Binary modules the json names (text-format ones of assert_malformed are skipped).
  python3 - "$tmp" "$corpus/spec" <<'PY'
import json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
kinds = {"module", "assert_invalid", "assert_malformed", "assert_unlinkable", "assert_uninstantiable"}
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(src, name)) as f:
        cmds = json.load(f)["commands"]
    for c in cmds:
        fn = c.get("filename", "")
        if c["type"] in kinds and fn.endswith(".wasm") and c.get("module_type", "binary") == "binary":
            shutil.copy(os.path.join(src, fn), os.path.join(dst, fn))
PY
  rm -rf "$tmp"
}

list_all() {
  local corpus=$1 dest=$2
  rm -rf "$dest"
  mkdir -p "$dest"
  local f rel
  while IFS= read -r f; do
    rel=${f#"$corpus"/}
    mkdir -p "$dest/$(dirname "$rel")"
    {
      for opts in "" "--metering" "--metering --det"; do
        echo "== options: ${opts:-default}"
        # shellcheck disable=SC2086
        "$tool" dump "$f" $opts 2>&1 || true
      done
    } > "$dest/$rel.txt"
  done < <(find "$corpus" -name '*.wasm' | sort)
}

if [[ ! -d "$out/baseline" ]]; then
  rm -rf "$out/corpus"
  freeze_corpus "$out/corpus" "$@"
  list_all "$out/corpus" "$out/baseline"
  echo "wasm-dump-diff: baseline of $(find "$out/baseline" -name '*.txt' | wc -l) modules in $out/baseline"
  exit 0
fi
list_all "$out/corpus" "$out/current"
n=$(find "$out/current" -name '*.txt' | wc -l)
if diff -r -q "$out/baseline" "$out/current" > "$out/diff.txt"; then
  echo "wasm-dump-diff: $n modules, listings identical"
  exit 0
fi
echo "wasm-dump-diff: $(wc -l < "$out/diff.txt") of $n modules differ (list in $out/diff.txt; diff -r $out/baseline $out/current)"
exit 1
