#!/usr/bin/env python3
"""Measures what each fusion family (src/wasm/DESIGN.md, "Superinstructions") is worth on the
real programs of bench/realworld (bench/realworld/build.sh WORKDIR builds them): every program
runs in our interpreter (`genvm-wasm run`; fusion only shapes the interpreter's slot code) with
all fusions on, with all off (--no-fuse) and with each family alone left out (--fuse-off NAME),
interleaved (round r runs every program in every configuration before round r+1 starts, so load
drifts hit all alike). Prints, per family, the minimum CPU time of the child (user+sys) of RUNS
runs with that family left out over the time with all fusions on, per program, and the
geometric mean of those ratios; above 1.00 means the family pays. Every run's checksum lines
must equal the ones the native build prints at the same scale (run once per program first): a
wrong engine or configuration fails loudly (exit 1).

The programs run at about half of their drivers' default scales (one interpreter run is about
2 to 10 s here); CoreMark takes no scale.
"""
import argparse
import math
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, 'realworld'))
from run import cpu_run  # noqa: E402  (the same child-CPU measurement as bench/realworld/run.py)

# argv[1] of each driver: about half of its default (lua/quickjs SCALE 2, sqlite3 250 thousand
# rows, zlib 3 MiB, bzip2 8 MiB); CoreMark has no argument.
SCALES = {'lua': ['1'], 'quickjs': ['1'], 'sqlite3': ['125'], 'zlib': ['2'], 'bzip2': ['4'], 'coremark': []}
# The lines that carry a run's result: our drivers print "<prog> checksum HEX", CoreMark its CRCs.
CHECKSUM_LINE = re.compile(r'^(\w+ checksum \w+|.*crc\w*\s*: 0x[0-9a-f]+)$')


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('workdir', help='the WORKDIR given to bench/realworld/build.sh')
    p.add_argument('-n', '--runs', type=int, default=3, help='runs per program and configuration (min is reported; default 3)')
    p.add_argument('--genvm-wasm', default=os.path.join(REPO, 'build/tools/genvm-wasm/genvm-wasm'),
                   help='our engine CLI (default: build/tools/genvm-wasm/genvm-wasm)')
    p.add_argument('--programs', help='comma-separated subset (default: every one built)')
    p.add_argument('--families', help='comma-separated subset of the families (default: every one the CLI knows)')
    p.add_argument('--markdown', action='store_true', help='print the table as Markdown')
    p.add_argument('--timeout', type=float, default=600, help='seconds per run before it counts as failed')
    a = p.parse_args()
    if a.runs < 1:
        p.error('--runs must be at least 1')
    return a


def known_families(gw):
    """The family names, from the error line the CLI prints for an unknown one."""
    proc = subprocess.run([gw, 'run', '--fuse-off', '?'], capture_output=True, text=True)
    m = re.search(r'\(families: ([\w,]+)\)', proc.stderr)
    if not m:
        sys.exit(f'fusion_families.py: error: {gw} does not list its fusion families '
                 f'(needs --fuse-off): {proc.stderr.strip()}')
    return m.group(1).split(',')


def checksum_lines(out):
    return [line.strip() for line in out.splitlines() if CHECKSUM_LINE.match(line.strip())]


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float('nan')


def print_table(programs, configs, best, failed, runs, load_seen, markdown, out):
    """Per configuration other than all-on: time / time(all on) per program, and the geomean."""
    header = ['left out'] + programs + ['geomean']
    rows = [['(all on, s)'] + [f'{best[(p, "all on")]:.2f}' if (p, 'all on') in best else 'FAIL' for p in programs] + ['']]
    for name, _ in configs[1:]:
        cells, ratios = [name], []
        for p in programs:
            t, base = best.get((p, name)), best.get((p, 'all on'))
            if (p, name) in failed or t is None or not base:
                cells.append('FAIL' if (p, name) in failed else '-')
                continue
            ratios.append(t / base)
            cells.append(f'{t / base:.3f}')
        cells.append(f'{geomean(ratios):.3f}' if ratios else '-')
        rows.append(cells)
    print(f'interpreter CPU seconds, min of {runs}, as time(left out) / time(all on); 1-minute load '
          f'average at the start and after each round: {min(load_seen):.1f} to {max(load_seen):.1f}',
          file=out)
    if markdown:
        print('| ' + ' | '.join(header) + ' |', file=out)
        print('|' + '|'.join('---' if i == 0 else '---:' for i in range(len(header))) + '|', file=out)
        for row in rows:
            print('| ' + ' | '.join(row) + ' |', file=out)
    else:
        widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            print('  '.join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))), file=out)
    out.flush()


def print_spread(programs, configs, times, out):
    """The noise: per program, the largest (max-min)/min over the configurations' runs."""
    parts = []
    for p in programs:
        spreads = [(max(ts) - min(ts)) / min(ts) for name, _ in configs if len(ts := times.get((p, name), [])) > 1]
        if spreads:
            parts.append(f'{p} {100 * sorted(spreads)[len(spreads) // 2]:.1f} % (max {100 * max(spreads):.1f} %)')
    if parts:
        print('spread between rounds, (max-min)/min, median over configurations: ' + ', '.join(parts), file=out)


def main():
    a = parse_args()
    gw = a.genvm_wasm
    if not os.access(gw, os.X_OK):
        sys.exit(f'fusion_families.py: error: no genvm-wasm at {gw} (see --genvm-wasm)')
    binary_dir = os.path.join(a.workdir, 'bin')
    built = [p for p in SCALES if os.path.exists(os.path.join(binary_dir, p + '.native'))
             and os.path.exists(os.path.join(binary_dir, p + '.wasm'))]
    programs = a.programs.split(',') if a.programs else built
    missing = [p for p in programs if p not in built]
    if missing or not programs:
        sys.exit(f'fusion_families.py: error: not built in {binary_dir}: {", ".join(missing) or "anything"} '
                 '(run bench/realworld/build.sh WORKDIR)')
    families = known_families(gw)
    if a.families:
        unknown = [f for f in a.families.split(',') if f not in families]
        if unknown:
            sys.exit(f'fusion_families.py: error: unknown famil{"ies" if len(unknown) > 1 else "y"}: {", ".join(unknown)}')
        families = a.families.split(',')
    configs = [('all on', []), ('all off', ['--no-fuse'])] + [(f, ['--fuse-off', f]) for f in families]
    print('command: ' + ' '.join(shlex.quote(x) for x in sys.argv))
    print(f'  {gw} run WORKDIR/bin/PROG.wasm SCALE [--no-fuse | --fuse-off FAMILY]; scales: '
          + ', '.join(f'{p} {" ".join(SCALES[p]) or "-"}' for p in programs))

    expected = {}
    for p in programs:
        cpu, out, err = cpu_run([os.path.join(binary_dir, p + '.native')] + SCALES[p], a.timeout)
        if err or not checksum_lines(out):
            sys.exit(f'fusion_families.py: error: native {p}: {err or "no checksum line in its output"}')
        expected[p] = checksum_lines(out)

    load_seen = [os.getloadavg()[0]]
    started = time.time()
    best, times, failed = {}, {}, {}
    for r in range(a.runs):
        for p in programs:
            for name, flags in configs:
                key = (p, name)
                if key in failed:
                    continue
                argv = [gw, 'run', os.path.join(binary_dir, p + '.wasm')] + SCALES[p] + flags
                cpu, out, err = cpu_run(argv, a.timeout)
                if err is None and checksum_lines(out) != expected[p]:
                    err = 'checksum differs from native: ' + ' / '.join(checksum_lines(out) or ['(none)'])
                if err:
                    failed[key] = err
                    print(f'FAIL {p} with {name}: {err}', file=sys.stderr)
                    continue
                times.setdefault(key, []).append(cpu)
                best[key] = min(best.get(key, math.inf), cpu)
        load_seen.append(os.getloadavg()[0])
        print(f'round {r + 1}/{a.runs} done ({time.time() - started:.0f} s, load {load_seen[-1]:.1f})',
              file=sys.stderr, flush=True)
        if r + 1 < a.runs:  # the table so far, so a run cut short still leaves figures
            print_table(programs, configs, best, failed, r + 1, load_seen, a.markdown, sys.stderr)
    print_table(programs, configs, best, failed, a.runs, load_seen, a.markdown, sys.stdout)
    print_spread(programs, configs, times, sys.stdout)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
