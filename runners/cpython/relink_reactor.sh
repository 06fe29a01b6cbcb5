#!/usr/bin/env bash
# Re-links build.sh's python.wasm as a reactor with our entry points (entry/genvm_entry.c:
# genvm_preinit and _start, docs/PROTOCOLS.md "Runner start-up snapshot"), from the objects
# build.sh's build kept; CPython is not compiled again.
#
#   runners/cpython/relink_reactor.sh BASE_DIST OUT_DIR
#
# BASE_DIST is build.sh's OUT_DIR (python.wasm, lib/, KEY). OUT_DIR becomes a symbolic link to
# the cached result: OUT_DIR/python.wasm (the reactor) and OUT_DIR/lib (the same standard
# library). Cached under $GENVM_THIRD_PARTY/cpython/reactor-<key>, the key hashing the base
# build's KEY, entry/*.c and this script. The link: CPython's own flags and objects (its
# Makefile's PY_CORE_LDFLAGS, LINK_PYTHON_OBJS, LIBS, MODLIBS, SYSLIBS) with entry/genvm_entry.o
# in place of Programs/python.o, -nostartfiles (no crt1: wasi-libc's command _start would run
# the constructors and exit) and --no-entry (wasm-ld then adds no _start and wraps no export).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -ne 2 ]; then echo "cpython-reactor: error: usage: relink_reactor.sh BASE_DIST OUT_DIR (see --help)" >&2; exit 2; fi
here="$(cd "$(dirname "$0")" && pwd)"
base="$(readlink -f "$1")"
out="$2"
fail() { echo "cpython-reactor: error: $*" >&2; exit 1; }
[ -f "$base/KEY" ] && [ -f "$base/python.wasm" ] || fail "$1 is not build.sh's result (no KEY / python.wasm)"
wasm_dir="$(dirname "$base")"
cache_root="$(dirname "$wasm_dir")"
build="$wasm_dir/build"
sdk="$wasm_dir/wasi-sdk"
base_key="$(cat "$base/KEY")"
src_tag="$(echo "$base_key" | cut -d- -f2)"
include="$cache_root/src-$src_tag/Include"
[ -f "$build/Makefile" ] && [ -d "$include" ] || fail "the base build's objects or sources are gone ($build, $include): rebuild with build.sh"
key="$( (echo "$base_key"; cd "$here" && sha256sum relink_reactor.sh entry/*.c) | sha256sum | cut -c1-16)"
dir="$cache_root/reactor-$key"

link_out() {
  mkdir -p "$(dirname "$out")"
  ln -sfn "$dir" "$out.tmp" && mv -T "$out.tmp" "$out"
}
if [ -f "$dir/DONE" ]; then link_out; exit 0; fi
exec 9>"$cache_root/lock"
flock 9
if [ -f "$dir/DONE" ]; then link_out; exit 0; fi
rm -rf "$dir" && mkdir -p "$dir"
cc="$sdk/bin/clang --sysroot=$sdk/share/wasi-sysroot"
# shellcheck disable=SC2086
$cc -O2 -std=c11 -Wall -Wextra -Wno-unused-parameter -Werror -I"$include" -I"$build" \
  -c "$here/entry/genvm_entry.c" -o "$dir/genvm_entry.o" || fail "compiling entry/genvm_entry.c failed"
# CPython's link line, from its Makefile's variables (the Makefile cannot rebuild itself here:
# build.sh removed the source tree it was configured from, hence -o Makefile -o Makefile.pre).
printf 'genvm-print-link:\n\t@echo $(PY_CORE_LDFLAGS) $(LINKFORSHARED) @@ $(LINK_PYTHON_OBJS) $(LIBS) $(MODLIBS) $(SYSLIBS)\n' >"$dir/print.mk"
line="$(make -s -C "$build" -o Makefile -o Makefile.pre -f Makefile -f "$dir/print.mk" genvm-print-link)" ||
  fail "reading the link line from $build/Makefile failed"
flags="${line%%@@*}"
objects="${line#*@@}"
# shellcheck disable=SC2086
(cd "$build" && $cc $flags -nostartfiles -Wl,--no-entry -o "$dir/python.wasm" "$dir/genvm_entry.o" $objects) ||
  fail "linking the reactor python.wasm failed"
ln -s "$base/lib" "$dir/lib"
echo "$base_key reactor-$key" >"$dir/KEY"
rm -f "$dir/print.mk" "$dir/genvm_entry.o"
touch "$dir/DONE"
echo "cpython-reactor: $dir/python.wasm" >&2
link_out
