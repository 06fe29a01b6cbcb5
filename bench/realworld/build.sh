#!/usr/bin/env bash
# Builds the real-program benchmarks (programs nobody here wrote, from Debian source packages)
# twice with the same clang flags: native x86-64 and wasm32-wasi against Debian's wasi-libc.
#
#   bench/realworld/build.sh WORKDIR [--coremark DIR]
#
# WORKDIR/debian-src/  the source packages, fetched with `apt-get source` through a private apt
#                      state (WORKDIR/apt: its own deb-src list, lists and cache; the system's
#                      apt configuration is not touched), only when missing
# WORKDIR/src/<pkg>/   the unpacked upstream tarballs (Debian's patches are not applied)
# WORKDIR/bin/         <prog>.native and <prog>.wasm for each program below
#
# Programs (each with a driver of ours, bench/realworld/<prog>/, that prints one checksum
# line): lua (Lua 5.4 running bench/realworld/lua/bench.lua), quickjs (running
# bench/realworld/quickjs/bench.js), sqlite3 (in-memory database), zlib, bzip2, and, with
# --coremark DIR (an EEMBC CoreMark checkout you fetched), coremark.
# Nothing here is built by CMake or CI. A program is rebuilt when its driver, its sources, the
# flags or the compiler change (a stamp per program). Time them with bench/realworld/run.py.
# Environment: REALWORLD_CC (default clang-14), REALWORLD_NICE (default 10).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
fail() { echo "realworld: error: $*" >&2; exit 1; }
say() { echo "realworld: $*" >&2; }
[ $# -ge 1 ] || fail "usage: build.sh WORKDIR [--coremark DIR] (see --help)"
work="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
coremark=""
while [ $# -gt 0 ]; do
  case "$1" in
    --coremark) [ $# -ge 2 ] || fail "--coremark needs a directory"; coremark="$(cd "$2" && pwd)"; shift 2 ;;
    *) fail "unknown argument '$1' (see --help)" ;;
  esac
done
here="$(cd "$(dirname "$0")" && pwd)"
cc="${REALWORLD_CC:-clang-14}"
nice_level="${REALWORLD_NICE:-10}"
command -v "$cc" >/dev/null || fail "$cc missing (run scripts/bootstrap)"
[ -f /usr/lib/wasm32-wasi/libc.a ] || fail "wasi-libc missing (run scripts/bootstrap)"

# The one set of flags both targets share; the wasm target adds only what selects it (target,
# sysroot, a 1 MiB shadow stack instead of wasm-ld's 64 KiB, which the language interpreters'
# recursion needs). No -mbulk-memory, as for CPython (runners/cpython/build.sh): with it LLVM 14
# keeps errno as real TLS, which bookworm's wasi-libc does not provide.
common_flags=(-O2 -DNDEBUG -w)
native_flags=()
wasm_flags=(--target=wasm32-wasi --sysroot=/usr -Wl,--strip-debug -Wl,-z,stack-size=1048576)
toolchain="$("$cc" --version | head -1); $(dpkg-query -W -f='${Version} ' wasi-libc libclang-rt-14-dev-wasm32 2>/dev/null)"

# ---- sources: package/suite pairs (QuickJS is in trixie only; the rest is bookworm's)
packages=(lua5.4/bookworm zlib/bookworm sqlite3/bookworm bzip2/bookworm quickjs/trixie)
apt="$work/apt"
fetch_sources() {
  local missing=() p
  for p in "${packages[@]}"; do
    compgen -G "$work/debian-src/${p%/*}_*.orig.tar.*" >/dev/null || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  say "fetching Debian source packages: ${missing[*]}"
  mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$work/debian-src"
  cat >"$apt/parts/debian-src.sources" <<SOURCES
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  cat >"$apt/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$apt/parts";
Dir::State::Lists "$apt/lists";
Dir::Cache "$apt/cache";
CONF
  APT_CONFIG="$apt/apt.conf" apt-get update -qq
  for p in "${missing[@]}"; do
    (cd "$work/debian-src" && APT_CONFIG="$apt/apt.conf" apt-get source -qq --download-only "$p" 2>&1 |
      grep -v 'unsandboxed as root' || true)
    compgen -G "$work/debian-src/${p%/*}_*.orig.tar.*" >/dev/null || fail "apt-get source $p failed"
  done
}
# unpack PKG: the upstream tarball into $work/src/PKG (once); prints the directory
unpack() {
  local pkg="$1" dest="$work/src/$1" tarballs
  tarballs=("$work"/debian-src/"$pkg"_*.orig.tar.*)
  if [ ! -f "$dest/DONE" ]; then
    rm -rf "$dest" && mkdir -p "$dest"
    tar -xf "${tarballs[0]}" -C "$dest" --strip-components=1
    touch "$dest/DONE"
  fi
  echo "$dest"
}

# build PROG INPUT_HASH SOURCES_AND_FLAGS...: PROG.native and PROG.wasm, unless their stamp says
# the same inputs built them already
build() {
  local prog="$1" inputs="$2"; shift 2
  local key stamp="$work/bin/$prog.stamp"
  key="$( (echo "$inputs"; sha256sum "$here/common.h" "$here/include/"*; echo "$toolchain"; ls "$work/debian-src"
          echo "${common_flags[*]} | ${native_flags[*]} | ${wasm_flags[*]} | $*") | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] && [ -f "$work/bin/$prog.native" ] && [ -f "$work/bin/$prog.wasm" ]; then
    return 0
  fi
  say "building $prog (native, wasm32-wasi)"
  rm -f "$stamp"
  nice -n "$nice_level" "$cc" "${common_flags[@]}" "${native_flags[@]}" "$@" -lm -o "$work/bin/$prog.native" ||
    fail "$prog: native build failed"
  nice -n "$nice_level" "$cc" "${common_flags[@]}" "${wasm_flags[@]}" "$@" -lm -o "$work/bin/$prog.wasm" ||
    fail "$prog: wasm32-wasi build failed"
  echo "$key" >"$stamp"
}
# hash_of FILE...: one hash of the given files (the driver and its scripts)
hash_of() { sha256sum "$@" | sha256sum | cut -c1-16; }
# embed_header NAME FILE OUT: OUT declares `static const char NAME[]` holding FILE's text
embed_header() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
name, src, out = sys.argv[1:]
data = open(src, 'rb').read()
body = ','.join(str(b) for b in data)
open(out, 'w').write(f'static const char {name}[] = {{{body},0}};\n')
PY
}

fetch_sources
mkdir -p "$work/bin" "$work/gen"

# ---- zlib: the library's own sources, without the gz* file layer
z="$(unpack zlib)"
build zlib "$(hash_of "$here/zlib/driver.c")" -I"$z" "$here/zlib/driver.c" \
  "$z"/{adler32,crc32,deflate,inflate,inftrees,inffast,trees,zutil,compress,uncompr}.c

# ---- bzip2: libbz2 (the bzip2 command's file handling is not used)
b="$(unpack bzip2)"
build bzip2 "$(hash_of "$here/bzip2/driver.c")" -I"$b" "$here/bzip2/driver.c" \
  "$b"/{blocksort,huffman,crctable,randtable,compress,decompress,bzlib}.c

# ---- Lua 5.4: the core and the base, string, table, math and utf8 libraries (the script needs
# no io/os/package); errors end the program through the driver (wasm32 has no setjmp).
l="$(unpack lua5.4)"
embed_header bench_lua "$here/lua/bench.lua" "$work/gen/bench_lua.h"
lua_core=(lapi lcode lctype ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser lstate
          lstring ltable ltm lundump lvm lzio lauxlib lbaselib lstrlib ltablib lmathlib lutf8lib)
lua_srcs=(); for f in "${lua_core[@]}"; do lua_srcs+=("$l/src/$f.c"); done
build lua "$(hash_of "$here/lua/driver.c" "$here/lua/bench.lua" "$here/lua/prelude.h")" \
  -I"$l/src" -I"$here/include" -I"$work/gen" -include "$here/lua/prelude.h" \
  "$here/lua/driver.c" "${lua_srcs[@]}"

# ---- SQLite: the amalgamation, generated from the source tree by its own makefile (tclsh), then
# compiled with one VFS of the driver's (SQLITE_OS_OTHER: no files, no locking)
s="$(unpack sqlite3)"
if [ ! -f "$work/sqlite-amalgamation/sqlite3.c" ]; then
  say "generating the SQLite amalgamation"
  command -v tclsh >/dev/null || fail "tclsh missing (the SQLite amalgamation is generated with it)"
  rm -rf "$work/sqlite-amalgamation" && mkdir -p "$work/sqlite-amalgamation"
  (cd "$work/sqlite-amalgamation" && nice -n "$nice_level" "$s/configure" --disable-tcl >configure.log 2>&1 &&
    nice -n "$nice_level" make sqlite3.c >make.log 2>&1) || fail "sqlite3.c generation failed (see $work/sqlite-amalgamation/*.log)"
fi
build sqlite3 "$(hash_of "$here/sqlite3/driver.c" "$work/sqlite-amalgamation/sqlite3.c")" \
  -DSQLITE_OS_OTHER=1 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_TEMP_STORE=3 \
  -DSQLITE_DEFAULT_MEMSTATUS=0 -DSQLITE_OMIT_WAL -DSQLITE_OMIT_SHARED_CACHE \
  -I"$work/sqlite-amalgamation" "$here/sqlite3/driver.c" "$work/sqlite-amalgamation/sqlite3.c"

# ---- QuickJS: the engine without quickjs-libc. EMSCRIPTEN is QuickJS's own switch for a wasm
# build without threads (bookworm's wasi-libc has no pthread): no Atomics, no native stack-depth
# check, a switch instead of computed-goto dispatch; set for both targets, so both run the same
# code.
q="$(unpack quickjs)"
embed_header bench_js "$here/quickjs/bench.js" "$work/gen/bench_js.h"
build quickjs "$(hash_of "$here/quickjs/driver.c" "$here/quickjs/bench.js")" \
  -D_GNU_SOURCE -DEMSCRIPTEN "-DCONFIG_VERSION=\"$(cat "$q/VERSION")\"" -I"$q" -I"$work/gen" -I"$here/include" \
  "$here/quickjs/driver.c" "$q"/{quickjs,dtoa,libregexp,libunicode,cutils}.c

# ---- CoreMark (optional): EEMBC's sources from the checkout given, its posix port, a fixed
# iteration count compiled in (SEED_VOLATILE: else the posix port reads it from argv and, without
# one, calibrates the count to 10 s of wall time, different for every engine), about a second
# natively; it validates its own CRCs.
if [ -n "$coremark" ]; then
  [ -f "$coremark/core_main.c" ] || fail "--coremark $coremark: no core_main.c there"
  build coremark "$(hash_of "$coremark"/*.c "$coremark"/*.h "$coremark"/posix/core_portme.[ch])" \
    -I"$coremark/posix" -I"$coremark" '-DFLAGS_STR="-O2"' -DSEED_METHOD=SEED_VOLATILE -DPERFORMANCE_RUN=1 -DITERATIONS=25000 \
    "$coremark"/{core_list_join,core_main,core_matrix,core_state,core_util}.c "$coremark/posix/core_portme.c"
fi
say "built: $(cd "$work/bin" && ls ./*.wasm | sed 's|^\./||; s|\.wasm$||' | tr '\n' ' ')"
