#!/usr/bin/env bash
# Builds CPython for wasm32-wasi (python.wasm + its standard library) from Debian's python3.13
# source, which scripts/bootstrap fetched into $GENVM_THIRD_PARTY (default third_party/).
#
#   runners/cpython/build.sh OUT_DIR
#
# OUT_DIR becomes a symbolic link to the cached result: OUT_DIR/python.wasm and
# OUT_DIR/lib/python3.13/ (the standard library, with .pyc). The result is cached under
# $GENVM_THIRD_PARTY/cpython/wasm-<key>, where <key> hashes the upstream tarball, this folder's
# build inputs (this script, Setup.local, the C modules' .c and .h) and the toolchain's
# versions: a second run with the same inputs only re-links OUT_DIR. The native build Python
# (the same CPython version, which a cross build needs) is cached by the tarball alone.
#
# The toolchain is Debian's: clang-14, wasm-ld-14, llvm-ar-14, wasi-libc (sysroot /usr) and
# libclang-rt-14-dev-wasm32, behind a WASI_SDK_PATH shim, so CPython's own recipe
# (Tools/wasm/config.site-wasm32-wasi and Tools/wasm/wasi-env) runs unchanged.
# Environment: GENVM_THIRD_PARTY, GENVM_CPYTHON_JOBS (default 2; make -j), GENVM_CPYTHON_NICE
# (default 10).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if [ $# -ne 1 ]; then echo "cpython: error: usage: build.sh OUT_DIR (see --help)" >&2; exit 2; fi
out="$1"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
third_party="${GENVM_THIRD_PARTY:-$repo/third_party}"
jobs="${GENVM_CPYTHON_JOBS:-2}"
nice_level="${GENVM_CPYTHON_NICE:-10}"
run() { nice -n "$nice_level" "$@"; }
say() { echo "cpython: $*" >&2; }
fail() { echo "cpython: error: $*" >&2; exit 1; }

shopt -s nullglob
tarballs=("$third_party"/debian-src/python3.13/python3.13_*.orig.tar.xz)
((${#tarballs[@]} == 1)) || fail "expected one python3.13 source tarball in $third_party/debian-src/python3.13 (run scripts/bootstrap)"
tarball="${tarballs[0]}"
version="$(basename "$tarball" .orig.tar.xz)"; version="${version#python3.13_}"

for tool in clang-14 wasm-ld-14 llvm-ar-14 llvm-ranlib-14; do
  command -v "$tool" >/dev/null || fail "$tool missing (run scripts/bootstrap)"
done
[ -f /usr/lib/wasm32-wasi/libc.a ] || fail "wasi-libc missing (run scripts/bootstrap)"

# ---- cache keys
src_hash="$(sha256sum "$tarball" | cut -c1-64)"
toolchain="$(clang-14 --version | head -1); $(dpkg-query -W -f='${Version}' wasi-libc libclang-rt-14-dev-wasm32 2>/dev/null)"
recipe_hash="$( (cd "$here" && sha256sum build.sh Setup.local ./*.c ./*.h; echo "$toolchain") | sha256sum | cut -c1-16)"
key="${version}-${src_hash:0:12}-${recipe_hash}"
cache_root="$third_party/cpython"
src_dir="$cache_root/src-${src_hash:0:12}"
native_dir="$cache_root/native-${src_hash:0:12}"
wasm_dir="$cache_root/wasm-$key"
result="$wasm_dir/result"

link_out() {
  mkdir -p "$(dirname "$out")"
  ln -sfn "$result" "$out.tmp" && mv -T "$out.tmp" "$out"
}
if [ -f "$wasm_dir/DONE" ]; then link_out; exit 0; fi
# One build at a time per cache (two build folders configured at once would otherwise clear
# each other's work); a waiter finds the result done.
mkdir -p "$cache_root"
exec 9>"$cache_root/lock"
flock 9
if [ -f "$wasm_dir/DONE" ]; then link_out; exit 0; fi
start=$SECONDS

# ---- the source: the upstream tarball only (Debian's patches are for Debian's own layout)
if [ ! -f "$src_dir/DONE" ]; then
  say "unpacking $(basename "$tarball")"
  rm -rf "$src_dir" && mkdir -p "$src_dir"
  tar -xJf "$tarball" -C "$src_dir" --strip-components=1
  touch "$src_dir/DONE"
fi

# ---- the native build Python (a cross build needs the same version to freeze modules,
# generate sysconfig data and byte-compile the standard library). -O1: it only runs the build.
if [ ! -f "$native_dir/DONE" ]; then
  say "native build Python ($version) in $native_dir"
  rm -rf "$native_dir" && mkdir -p "$native_dir"
  (cd "$native_dir" &&
    OPT="-DNDEBUG -O1" run "$src_dir/configure" -q --disable-test-modules --without-ensurepip >configure.log 2>&1 &&
    run make -j"$jobs" >make.log 2>&1) || fail "native build failed, see $native_dir/*.log"
  touch "$native_dir/DONE"
  say "native build Python done ($((SECONDS - start)) s)"
fi
build_python="$native_dir/python"

# ---- the WASI_SDK_PATH shim: bin/ wraps Debian's LLVM 14 for wasm32-wasi, the sysroot is /usr
# (Debian's wasi-libc installs into /usr/include/wasm32-wasi and /usr/lib/wasm32-wasi).
sdk="$wasm_dir/wasi-sdk"
rm -rf "$wasm_dir" && mkdir -p "$sdk/bin" "$sdk/share"
ln -s /usr "$sdk/share/wasi-sysroot"
# Reproducible bytes (runner ids will hash them): configure runs as ../src/configure (as
# CPython's Tools/wasm/wasi.py does), so the source folder the build bakes in (VPATH, for
# getpath) is relative; __FILE__ paths (asserts) name /cpython, not this cache folder; and
# __DATE__/__TIME__ (sys.version) are the source's own date (the mtime tar keeps of
# Include/patchlevel.h), not the build's.
build_date="$(date -u -r "$src_dir/Include/patchlevel.h" '+%b %e %Y')"
for pair in clang:clang-14 clang++:clang++-14 clang-cpp:clang-cpp-14; do
  name="${pair%%:*}"; tool="${pair#*:}"
  # No -mbulk-memory: with it (and without atomics) LLVM 14 keeps thread_local as real TLS
  # (__tls_base), which CPython 3.13's _Py_tss_tstate then needs and bookworm's wasi-libc
  # (errno not TLS) does not provide; without it, thread-locals become plain globals.
  printf '#!/bin/sh\nexec %s --target=wasm32-wasi -ffile-prefix-map=%s=/cpython -Wno-builtin-macro-redefined %s %s "$@"\n' \
    "$tool" "$wasm_dir" "'-D__DATE__=\"$build_date\"'" "'-D__TIME__=\"00:00:00\"'" >"$sdk/bin/$name"
done
ln -s "$(command -v wasm-ld-14)" "$sdk/bin/wasm-ld"
ln -s "$(command -v llvm-ar-14)" "$sdk/bin/llvm-ar"
ln -s "$(command -v llvm-ranlib-14)" "$sdk/bin/ranlib"
chmod +x "$sdk/bin/"*

# ---- CPython for wasm32-wasi with its own recipe, from a source tree of its own: our
# Modules/Setup.local and the C modules of this folder are added to its Modules/ (makesetup
# compiles a module's sources from there), so builds of different inputs never share files.
wasm_src="$wasm_dir/src"
mkdir -p "$wasm_src"
tar -xJf "$tarball" -C "$wasm_src" --strip-components=1
for f in "$here"/*.c "$here"/*.h; do cp "$f" "$wasm_src/Modules/"; done
build="$wasm_dir/build"
mkdir -p "$build/Modules"
cp "$here/Setup.local" "$build/Modules/Setup.local"
# Bookworm's wasi-libc (2022) has no <pthread.h>: configure then leaves SIZEOF_PTHREAD_T undefined
# and 3.13's thread_pthread.h refuses to compile. CPython's own stubs (Include/cpython/
# pthread_stubs.h, used when the libc has none) define pthread_t as `unsigned`: 4 bytes.
say "configuring for wasm32-wasi in $build"
(cd "$build" &&
  WASI_SDK_PATH="$sdk" CONFIG_SITE="$wasm_src/Tools/wasm/config.site-wasm32-wasi" \
    OPT="-DNDEBUG -O2" LDFLAGS="-Wl,--strip-debug" \
    ac_cv_have_pthread_t=yes ac_cv_sizeof_pthread_t=4 \
    run "$wasm_src/Tools/wasm/wasi-env" ../src/configure -q \
      --host=wasm32-wasi --build="$("$wasm_src/config.guess")" \
      --with-build-python="$build_python" --prefix=/ \
      --disable-test-modules --without-ensurepip >configure.log 2>&1) ||
  fail "wasm configure failed, see $build/configure.log and $build/config.log"
say "building python.wasm (make -j$jobs)"
(cd "$build" && WASI_SDK_PATH="$sdk" run "$wasm_src/Tools/wasm/wasi-env" make -j"$jobs" >make.log 2>&1) ||
  fail "wasm build failed, see $build/make.log"
say "installing the standard library"
# libinstall, not install: no headers, scripts or static library. Its own byte-compilation
# (three optimisation levels, every core) is replaced by one pass below.
stage="$wasm_dir/stage"
(cd "$build" && WASI_SDK_PATH="$sdk" run "$wasm_src/Tools/wasm/wasi-env" \
  make libinstall DESTDIR="$stage" PYTHON_FOR_BUILD=true >install.log 2>&1) ||
  fail "install failed, see $build/install.log"
mkdir -p "$result/lib"
cp "$build/python.wasm" "$result/python.wasm"
mv "$stage/lib/python3.13" "$result/lib/python3.13"
# The build's sysconfig data names its folders; name them as the compiler's prefix map does.
sed -i -e "s|$wasm_dir|/cpython|g" -e "s|$native_dir|/cpython-native|g" \
  "$result/lib/python3.13/"_sysconfigdata_*.py
# Every module is built in: lib-dynload stays empty, but its presence is how CPython finds its
# exec_prefix (else it warns on every start).
mkdir -p "$result/lib/python3.13/lib-dynload"
# Parts of the installed library a contract runner never uses.
(cd "$result/lib/python3.13" && rm -rf test idlelib tkinter turtledemo turtle.py ensurepip \
  lib2to3 venv pydoc_data config-3.13-wasm32-wasi)
# .pyc of optimisation level 0 only, unchecked-hash: their bytes depend on the sources alone
# (not on mtimes), so the library is reproducible and start-up never stats a source.
run "$build_python" -Wi -m compileall -q -o 0 -j"$jobs" --invalidation-mode unchecked-hash \
  -d /lib/python3.13 -x 'bad_coding|badsyntax|site-packages' "$result/lib/python3.13" >"$build/compileall.log" 2>&1 ||
  fail "byte-compiling the library failed, see $build/compileall.log"
echo "$key" >"$result/KEY"
rm -rf "$stage" "$wasm_src"
touch "$wasm_dir/DONE"
say "done in $((SECONDS - start)) s: $result"
link_out
