#!/bin/sh
# Spawn+wait latency of /bin/true under the supervisor against plain posix_spawn, the cost of
# the guard and of cgroup containment as ratios, and the teardown time of a SIGTERM-obeying
# tree. Usage: bench/supervisor.sh [BUILD_DIR] [ROUNDS] [SPAWNS_PER_ROUND]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
rounds=${2:-10}
per_round=${3:-100}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
log=$(mktemp)
if ! cmake --build "$build" --target supervisor_bench -j2 >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) cores; rounds=$rounds x $per_round spawns"
"$build/bench/supervisor/supervisor_bench" "$rounds" "$per_round"
