# The Python runner's CPython (python.wasm + standard library), with -DGENVM_BUILD_CPYTHON=ON.
# Included by the top-level CMakeLists.txt before any other target: it is the build's longest
# single step (minutes, much of it configure scripts that use one core), and ninja starts the
# steps that are ready in the order they are defined, so it starts first and the C++ compiles
# beside it instead of leaving one core idle at the end.
# build.sh caches its result under third_party/cpython by a key of its inputs, so this target
# costs one hash of the source tarball when nothing changed; ${CMAKE_BINARY_DIR}/runners/cpython/dist
# is a link to the cached result (dist/python.wasm, dist/lib/python3.13/). dist/python.wasm is
# the reactor relink_reactor.sh makes of build.sh's objects (exports genvm_preinit and _start,
# docs/PROTOCOLS.md "Runner start-up snapshot"), a separate cached step: a change to
# entry/genvm_entry.c re-links, it does not rebuild CPython. dist-command is build.sh's own.
# Its niceness under the build: 0, so its processes share the cores equally with the C++
# compiles beside it (build.sh's own default, 10 for a hand-run build, would starve it until
# the C++ is done and leave it alone at the end again).
set(GENVM_CPYTHON_NICE 0 CACHE STRING "nice level of the CPython build (runners/cpython/build.sh)")
set(GENVM_CPYTHON_DIR "${CMAKE_BINARY_DIR}/runners/cpython/dist" CACHE INTERNAL "")
add_custom_target(cpython ALL
  COMMAND "${CMAKE_COMMAND}" -E env "GENVM_CPYTHON_NICE=${GENVM_CPYTHON_NICE}"
          "${CMAKE_SOURCE_DIR}/runners/cpython/build.sh" "${CMAKE_BINARY_DIR}/runners/cpython/dist-command"
  COMMAND "${CMAKE_SOURCE_DIR}/runners/cpython/relink_reactor.sh" "${CMAKE_BINARY_DIR}/runners/cpython/dist-command" "${GENVM_CPYTHON_DIR}"
  COMMENT "CPython for wasm32-wasi (runners/cpython/build.sh, relink_reactor.sh; cached)"
  USES_TERMINAL)

