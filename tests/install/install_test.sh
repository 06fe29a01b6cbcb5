#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR: genvm-cc builds a contract from the build tree; then
# `cmake --install` into a temporary prefix gives the documented layout (cmake/install.cmake),
# and the installed genvm-cc, genvm, genvm-node and genvm-manager work from there alone.
set -u
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fails=$((fails + 1)); }

# The build tree's genvm-cc: a contract outside the project's CMake.
cat > "$tmp/hello.c" <<'C'
#include "genlayer.h"
static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  gl_buf out = {0};
  gl_enc_cstr(&out, "hello");
  gl_return(&out);
}
GL_CONTRACT(run)
C
if "$build/bin/genvm-cc" "$tmp/hello.c" -o "$tmp/hello.wasm" && "$build/tools/genvm/genvm" check "$tmp/hello.wasm" >/dev/null; then
  ok "build-tree genvm-cc builds a contract genvm check accepts"
else
  bad "build-tree genvm-cc"
fi
if "$build/bin/genvm-cc" 2>/dev/null; then bad "genvm-cc without arguments exits 0"; else ok "genvm-cc without arguments is a usage error"; fi
"$build/bin/genvm-cc" --help | grep -q "usage: genvm-cc" && ok "genvm-cc --help" || bad "genvm-cc --help"
if "$build/bin/genvm-cc" -c "$tmp/hello.c" -o "$tmp/hello.o" && [ -s "$tmp/hello.o" ]; then
  ok "genvm-cc -c compiles without linking"
else
  bad "genvm-cc -c"
fi
printf 'static void run(const gl_message* m) { nope(); }\n' > "$tmp/broken.c"
if "$build/bin/genvm-cc" "$tmp/broken.c" -o "$tmp/broken.wasm" 2>"$tmp/err"; then
  bad "a broken contract compiled"
else
  ok "a broken contract fails with clang's message ($(grep -c error "$tmp/err") error lines)"
fi

# The installed tree.
prefix="$tmp/prefix"
if cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then ok "cmake --install"; else bad "cmake --install: $(tail -3 "$tmp/install.log")"; fi
version=$(sed -n 's/.*kExecutorVersion = "\([^"]*\)".*/\1/p' "$src/src/executor/version.h")
for f in bin/genvm bin/genvm-node bin/genvm-manager bin/genvm-cc bin/genvm-calldata "executor/$version/bin/genvm" \
         data/manifest.yaml include/genlayer/genlayer.h lib/genlayer/wasm32-wasi/libgenlayer_sdk.a; do
  [ -e "$prefix/$f" ] && ok "installed $f" || bad "missing $f"
done
if "$prefix/bin/genvm-cc" "$tmp/hello.c" -o "$tmp/hello2.wasm" && cmp -s "$tmp/hello.wasm" "$tmp/hello2.wasm"; then
  ok "installed genvm-cc gives the same module"
else
  bad "installed genvm-cc"
fi
# The installed node finds the installed executor beside itself and runs the contract.
cd "$tmp"
out=$("$prefix/bin/genvm-node" --state "$tmp/n.db" --validators 1 deploy "$tmp/hello2.wasm" 2>&1)
addr=$(printf '%s\n' "$out" | sed -n 's/.*\(0x[0-9a-f]\{40\}\).*/\1/p' | head -1)
if [ -n "$addr" ] && "$prefix/bin/genvm-node" --state "$tmp/n.db" --validators 1 view "$addr" greet 2>&1 | grep -q '"hello"'; then
  ok "installed genvm-node deploys and views with the installed genvm"
else
  bad "installed genvm-node: $out"
fi
"$prefix/bin/genvm-manager" --help >/dev/null 2>&1 && ok "installed genvm-manager --help" || bad "installed genvm-manager --help"

echo "$fails failed"
[ "$fails" -eq 0 ]
